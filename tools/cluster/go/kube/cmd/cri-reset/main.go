// Command cri-reset stops and removes every pod sandbox of a CRI runtime. `cluster down` runs it
// before stopping containerd so that the runtime itself tears each pod down: containers killed,
// CNI DEL run (veth, IP lease and masquerade chain released), sandbox mounts removed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	socket := flag.String("socket", "", "path of the CRI runtime's unix socket")
	timeout := flag.Duration("timeout", 60*time.Second, "time allowed for the whole reset")
	flag.Parse()
	if *socket == "" {
		fmt.Fprintln(os.Stderr, "Error: cri-reset: no --socket given; pass the runtime's unix socket path")
		os.Exit(2)
	}
	conn, err := grpc.NewClient("unix://"+*socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: cri-reset: %s: %v\n", *socket, err)
		os.Exit(1)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	client := runtimeapi.NewRuntimeServiceClient(conn)
	resp, err := client.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: cri-reset: listing sandboxes on %s: %v\n", *socket, err)
		os.Exit(1)
	}
	failures := 0
	for _, sandbox := range resp.Items {
		if _, err := client.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-reset: stop %s: %v\n", sandbox.Id, err)
			failures++
			continue
		}
		if _, err := client.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sandbox.Id}); err != nil {
			fmt.Fprintf(os.Stderr, "cri-reset: remove %s: %v\n", sandbox.Id, err)
			failures++
		}
	}
	fmt.Printf("cri-reset: %d sandboxes, %d failures\n", len(resp.Items), failures)
	if failures > 0 {
		os.Exit(1)
	}
}
