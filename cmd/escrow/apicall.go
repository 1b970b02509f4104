package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// runAPI is "escrow api METHOD PATH [--data JSON|@FILE]": any endpoint, those the SDK has
// no method for included, through the SDK's own pipeline (credentials, As-Customer,
// retries, rate limits, typed errors) by way of Client.Do, with the answer printed as
// indented JSON.
func runAPI(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow api"
	call := &apiCall{stderr: stderr}
	return apiCommand(ctx, name, name+" METHOD PATH [--data JSON|@FILE|@-] [-i]\n\n"+
		"PATH is relative to the base URL, with an optional query: customer/me, transaction/42,\n"+
		"partner/transactions?limit=5; a leading /"+escrow.APIVersion+"/, as in the CLI's error messages, is dropped.\n"+
		"The answer is printed as indented JSON (with or without --json).", args, stdout, stderr, true,
		func(fs *flag.FlagSet) {
			fs.StringVar(&call.data, "data", "", "the request body: `JSON`, @file, or @- for standard input")
			fs.BoolVar(&call.include, "i", false, "also print the answer's status, rate-limit allowance and request id on stderr")
		},
		call.parse, call.send)
}

// apiCall is one "escrow api" call: its flags, its arguments, and where -i prints.
type apiCall struct {
	data         string // --data
	include      bool   // -i
	method, path string
	body         json.RawMessage
	stderr       io.Writer
}

// parse takes the method and path from the arguments, and reads the body --data names.
func (c *apiCall) parse(positional []string) (err error) {
	if err = want("a method", "a path")(positional); err != nil {
		return err
	}
	c.method, c.path = strings.ToUpper(positional[0]), apiPath(positional[1])
	if c.method == "" || strings.Trim(c.method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return usagef("method %q is not an HTTP method such as GET or POST", positional[0])
	}
	if c.data != "" {
		c.body, err = readData(c.data)
	}
	return err
}

// send makes the call through Client.Do and returns its answer as JSON.
func (c *apiCall) send(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
	var in any // a nil json.RawMessage in an interface is not a nil body
	if c.body != nil {
		in = c.body
	}
	var resp escrow.Response
	var out json.RawMessage
	err := client.Do(ctx, c.method, c.path, in, &out, append(opts, escrow.WithResponse(&resp))...)
	if c.include && resp.StatusCode != 0 {
		printResponse(c.stderr, &resp)
	}
	if errors.Is(err, escrow.ErrInvalidArgument) {
		// Do refused the path or the method before sending: the command line's fault.
		return nil, nil, usagef("%s", strings.TrimPrefix(err.Error(), "escrow: "))
	}
	if err != nil {
		return nil, nil, err
	}
	if out == nil {
		// A 204 or an empty body: --json prints null, people see nothing.
		return nil, func(io.Writer) {}, nil
	}
	return out, func(w io.Writer) { writeJSON(w, out) }, nil
}

// apiPath drops a leading version segment, so that a path copied from an error message
// ("GET /2017-09-01/transaction/42: 404") can be given as it is.
func apiPath(p string) string {
	trimmed := strings.TrimPrefix(p, "/")
	if rest, ok := strings.CutPrefix(trimmed, escrow.APIVersion+"/"); ok {
		return rest
	}
	return p
}

// readData reads --data: JSON given inline, @file, or @- for standard input. It must be
// valid JSON; what the API makes of it is the API's business.
func readData(data string) (json.RawMessage, error) {
	b := []byte(data)
	if file, ok := strings.CutPrefix(data, "@"); ok {
		var err error
		if file == "-" {
			b, err = io.ReadAll(os.Stdin)
		} else {
			b, err = os.ReadFile(file)
		}
		if err != nil {
			return nil, usagef("--data: %v", err)
		}
	}
	if !json.Valid(b) {
		return nil, usagef("--data is not valid JSON")
	}
	return json.RawMessage(b), nil
}

// printResponse shows what an answer said beyond its body, as curl -i would show headers.
func printResponse(w io.Writer, r *escrow.Response) {
	fmt.Fprintf(w, "status %d", r.StatusCode)
	if r.RateLimit.Remaining >= 0 {
		fmt.Fprintf(w, ", %d remaining", r.RateLimit.Remaining)
		if r.RateLimit.Limit >= 0 {
			fmt.Fprintf(w, " of %d", r.RateLimit.Limit)
		}
		if !r.RateLimit.Reset.IsZero() {
			fmt.Fprintf(w, " until %s", r.RateLimit.Reset.UTC().Format(time.RFC3339))
		}
	}
	if r.RequestID != "" {
		fmt.Fprintf(w, ", request id %s", r.RequestID)
	}
	fmt.Fprintln(w)
}
