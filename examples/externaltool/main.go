// Command externaltool serves a custom tool on the Cairn bus: a team's own
// tool, run by its own process, called by agents like any built-in tool.
//
//	go run ./examples/externaltool --nats nats://127.0.0.1:4222 --pool weather
//
// The tool is registered in the cairn_tools bucket under the pool "weather";
// the orchestrator dispatches its calls to cairn.tool.weather.forecast and
// receives the results from CAIRN_RESULTS. Run several copies to scale out:
// they share the pool's work queue. SIGINT or SIGTERM stops it gracefully.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/tool"
	"github.com/cairn-agents/cairn/pkg/toolbus"
	"github.com/nats-io/nats.go"
)

func main() {
	url := flag.String("nats", nats.DefaultURL, "NATS server URL")
	pool := flag.String("pool", "weather", "pool to serve")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The ten lines that serve a tool:
	nc, err := nats.Connect(*url)
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	bus, err := toolbus.New(nc, events.Names{})
	if err != nil {
		log.Fatal(err)
	}
	if err := bus.Serve(ctx, toolbus.Worker{Pool: *pool, Tools: []tool.Tool{forecast{}}}); err != nil {
		log.Fatal(err)
	}
}

// forecast is the custom tool: any type with Spec and Execute.
type forecast struct{}

func (forecast) Spec() events.ToolSpec {
	return events.ToolSpec{
		Name:        "forecast",
		Description: "Tomorrow's weather for a city.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},` +
			`"required":["city"],"additionalProperties":false}`),
		Idempotent: true, // safe to run again if a worker dies mid-call
		TimeoutMs:  5000,
	}
}

func (forecast) Execute(ctx context.Context, c tool.Call, onUpdate func(tool.Result)) (tool.Result, error) {
	var args struct {
		City string `json:"city"`
	}
	if err := json.Unmarshal(c.Arguments, &args); err != nil || args.City == "" {
		return tool.Error(`forecast needs {"city": "<name>"}`), nil
	}
	onUpdate(tool.Text("asking the sky over " + args.City + "..."))
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	return tool.Text(fmt.Sprintf("%s tomorrow: mild, light wind, no rain.", args.City)), nil
}
