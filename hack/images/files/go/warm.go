// Program warm imports the standard packages task scripts use most, so that building it fills
// the Go image's seed build cache (see hack/images/recipes/go.sh). It is never run.
package main

import (
	_ "bufio"
	_ "bytes"
	_ "context"
	_ "crypto/sha256"
	_ "encoding/base64"
	_ "encoding/csv"
	_ "encoding/json"
	_ "errors"
	_ "flag"
	_ "fmt"
	_ "io"
	_ "log"
	_ "math"
	_ "math/rand"
	_ "os"
	_ "os/exec"
	_ "path/filepath"
	_ "regexp"
	_ "sort"
	_ "strconv"
	_ "strings"
	_ "sync"
	_ "time"
)

func main() {}
