// Command pause is the sandbox (pause) process of every pod in the test cluster: it holds the
// pod's namespaces, reaps zombies when it is PID 1 of a shared PID namespace, and exits on
// SIGINT or SIGTERM. Built static so the image is a single file.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
			continue
		}
		os.Exit(0)
	}
}
