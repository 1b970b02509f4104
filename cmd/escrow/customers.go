package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
)

// runCustomersMe is "escrow customers me": a quick check of which account, and which
// environment, the credentials reach.
func runCustomersMe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow customers me"
	fs := newFlagSet(name, "escrow customers me [api flags]", stderr)
	var api apiFlags
	api.register(fs, false)
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	c, err := client.Customers.Get(ctx, escrow.Me)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	return api.print(stdout, stderr, name, c, func(w io.Writer) { printCustomer(w, c, client.BaseURL()) })
}

// printCustomer shows an account and the API it was read from.
func printCustomer(w io.Writer, c *escrow.Customer, baseURL string) {
	tw := newTable(w)
	fmt.Fprintf(tw, "ID\t%d\n", c.ID)
	fmt.Fprintf(tw, "E-mail\t%s\n", c.Email)
	fmt.Fprintf(tw, "Name\t%s\n", orDash(strings.Join(strings.Fields(c.FirstName+" "+c.MiddleName+" "+c.LastName), " ")))
	fmt.Fprintf(tw, "Username\t%s\n", orDash(c.Username))
	fmt.Fprintf(tw, "Display name\t%s\n", orDash(c.DisplayName))
	fmt.Fprintf(tw, "Phone\t%s\n", orDash(c.PhoneNumber))
	fmt.Fprintf(tw, "Address\t%s\n", address(c.Address))
	if c.Company != nil {
		fmt.Fprintf(tw, "Company\t%s\n", orDash(c.Company.CompanyName))
	}
	if v := c.Verification; v != nil {
		for _, s := range []struct {
			what  string
			state *escrow.VerificationState
		}{{"personal", v.Personal}, {"company", v.Company}, {"extended", v.Extended}} {
			if s.state != nil {
				fmt.Fprintf(tw, "Verification (%s)\t%s\n", s.what, s.state.Status)
			}
		}
	}
	fmt.Fprintf(tw, "Webhooks\t%d\n", len(c.Webhooks))
	fmt.Fprintf(tw, "Disbursement methods\t%d\n", len(c.DisbursementMethods))
	fmt.Fprintf(tw, "API\t%s\n", baseURL)
	tw.Flush()
}

// address shows a postal address on one line, or "-".
func address(a *escrow.Address) string {
	if a == nil {
		return "-"
	}
	var parts []string
	for _, p := range []string{a.Line1, a.Line2, a.City, a.State, a.PostCode, a.Country} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return orDash(strings.Join(parts, ", "))
}
