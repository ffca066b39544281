#!/usr/bin/env node
// kubectl's completion of `kubectl cronscale …`: kubectl (1.26+) runs kubectl_complete-<plugin>
// with the words typed so far and reads one candidate a line. It is `cronscale __complete --kubectl`.
process.argv.splice(2, 0, "__complete", "--kubectl");
await import("./cronscale.js");
