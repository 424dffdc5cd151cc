// Command serve is the process of workshop exercise 08-liveview/5-your-page:
// the kit's controller (ctrlkit.NewYourPage) with your Mount and
// SpanProcessors, serving your mux on a loopback port until Ctrl-C.
//
//	go run ./workshop/exercises/08-liveview/5-your-page/serve
package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"time"

	yourpage "github.com/informer-anatomy/informer-anatomy/workshop/exercises/08-liveview/5-your-page"
	"github.com/informer-anatomy/informer-anatomy/workshop/kit/ctrlkit"
)

// holdFor is how long the held reconcile stays held once every update
// has reached the queue: time to see it in flight on the page.
const holdFor = 5 * time.Second

func main() {
	mux := http.NewServeMux()
	// Yours first: the live view must exist before the informer starts
	// to see its first stream.
	yourpage.Mount(mux)
	yp, err := ctrlkit.NewYourPage(mux, yourpage.SpanProcessors())
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
	defer yp.Stop()
	fmt.Printf("Your controller runs in this process. Its page, if your Mount serves it: %s\n", yp.URL+ctrlkit.YourPageMount[1:])
	fmt.Print("Open it, then press Enter to play the scenario. ")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Println() // no terminal: play at once, on a line of its own
	}
	say := func(s string) { fmt.Println("  " + s) }
	if err := yp.RunScenario(say, holdFor); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return
	}
	fmt.Println("Done: read the page. Ctrl-C stops the process.")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	<-ctx.Done()
}
