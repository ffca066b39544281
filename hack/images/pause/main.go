// Command pause is the pod sandbox ("infra") container of the local node: it holds the pod's
// namespaces open and does nothing else. It sleeps until SIGTERM or SIGINT, then exits 0, so
// the kubelet can stop a pod without waiting out a grace period.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	// As PID 1 of the sandbox it may inherit orphaned children; reaping them keeps the pod's
	// PID namespace free of zombies (SIGCHLD is otherwise ignored by Go's runtime).
	signal.Notify(stop, syscall.SIGCHLD)
	for sig := range stop {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
