package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	escrow "github.com/escrowkit/escrow-go"
)

// apiCommand runs a command that calls the API once or twice: it parses the flags (the API
// flags, with --as-customer when actAs, and the command's own), checks the positional
// arguments, connects, and runs do, whose answer is printed as JSON with --json and by
// human otherwise.
func apiCommand(ctx context.Context, name, synopsis string, args []string, stdout, stderr io.Writer, actAs bool,
	flags func(fs *flag.FlagSet), check func(positional []string) error,
	do func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (answer any, human func(w io.Writer), err error)) int {
	fs := newFlagSet(name, withFlags(synopsis, "[api flags]"), stderr)
	var api apiFlags
	api.register(fs, actAs)
	if flags != nil {
		flags(fs)
	}
	_, code, ok := parseChecked(fs, name, args, check, stderr)
	if !ok {
		return code
	}
	client, release, err := api.connect(stderr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer release()
	answer, human, err := do(ctx, client, api.requestOptions())
	if err != nil {
		return exitCode(stderr, name, err)
	}
	return api.print(stdout, stderr, name, answer, human)
}

// transactionID checks "ID" and stores it in id.
func transactionID(id *int64) func([]string) error {
	return func(positional []string) (err error) {
		if err = want("a transaction id")(positional); err == nil {
			*id, err = parseID("transaction id", positional[0])
		}
		return err
	}
}

// runPayList is "escrow transactions pay list ID": how the buyer may pay, and how much.
func runPayList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions pay list"
	var id int64
	return apiCommand(ctx, name, name+" ID", args, stdout, stderr, true, nil, transactionID(&id),
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			m, err := client.Transactions.GetPaymentMethods(ctx, id, opts...)
			return m, func(w io.Writer) { printPaymentMethods(w, m) }, err
		})
}

// printPaymentMethods shows the methods with their totals, and why totals differ: card and
// PayPal add a payment fee that wire transfers do not.
func printPaymentMethods(w io.Writer, m *escrow.PaymentMethods) {
	tw := newTable(w)
	fmt.Fprintln(tw, "METHOD\tTOTAL\tPAYMENT FEE\tAVAILABLE")
	for _, a := range m.AvailablePaymentMethods {
		fmt.Fprintf(tw, "%s\t%s\t%s\tyes\n", a.Type, a.Total, a.Total.Sub(m.TotalWithoutPaymentFee))
	}
	for _, c := range m.ConditionallyAvailablePaymentMethods {
		fmt.Fprintf(tw, "%s\t%s\t%s\tonce %s\n", c.Type, c.Total, c.Total.Sub(m.TotalWithoutPaymentFee), strings.Join(c.Conditions, ", "))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nWithout a payment fee the buyer pays %s. Card, PayPal and POLi are paid on the page 'pay choose' prints;\n"+
		"a wire is sent at the bank with the details of 'pay wire', then reported with 'pay wire-sent'.\n", m.TotalWithoutPaymentFee)
}

// runPayChoose is "escrow transactions pay choose ID METHOD": it starts paying by card,
// PayPal or POLi and prints the provider's page that completes the payment.
func runPayChoose(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions pay choose"
	var id int64
	var method escrow.PaymentMethodType
	var returnURL string
	return apiCommand(ctx, name, name+" ID METHOD [--return-url URL]\n\nMETHOD is credit_card, paypal or poli; wire transfers use 'pay wire' and 'pay wire-sent'", args, stdout, stderr, true,
		func(fs *flag.FlagSet) {
			fs.StringVar(&returnURL, "return-url", "", "where the payment page sends the buyer afterwards (`URL`)")
		},
		func(positional []string) (err error) {
			if err = want("a transaction id", "a payment method")(positional); err != nil {
				return err
			}
			method = escrow.PaymentMethodType(positional[1])
			switch method {
			case escrow.PaymentCreditCard, escrow.PaymentPaypal, escrow.PaymentPoli:
			case escrow.PaymentWireTransfer, escrow.PaymentInternationalWireTransfer:
				return usagef("a wire is not chosen but sent: 'escrow transactions pay wire %s' shows where to, 'pay wire-sent %[1]s' reports it", positional[0])
			default:
				return usagef("unknown payment method %q: want credit_card, paypal or poli", method)
			}
			id, err = parseID("transaction id", positional[0])
			return err
		},
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			page, err := client.Transactions.ChoosePaymentMethod(ctx, id, method, &escrow.ChoosePaymentMethodRequest{ReturnURL: returnURL}, opts...)
			return page, func(w io.Writer) {
				fmt.Fprintf(w, "The buyer pays by %s on this page:\n  %s\n", method, page.LandingPage)
				if strings.Contains(page.LandingPage, "/_emulator/") {
					fmt.Fprintf(w, "This is an emulator's page, where nobody pays: 'escrow emulator approve %d' brings the buyer's funds in.\n", id)
				}
			}, err
		})
}

// runPayWire is "escrow transactions pay wire ID": where the buyer wires the funds.
func runPayWire(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions pay wire"
	var id int64
	// No --as-customer: the API does not take As-Customer here, so the buyer reads the
	// details with their own key.
	return apiCommand(ctx, name, name+" ID", args, stdout, stderr, false, nil, transactionID(&id),
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			d, err := client.Transactions.GetWireTransferDetails(ctx, id, opts...)
			if err != nil {
				return nil, nil, err
			}
			// The amount to wire is the wire method's total, which the payment methods give.
			amount := "-"
			if m, err := client.Transactions.GetPaymentMethods(ctx, id, opts...); err == nil {
				for _, a := range m.AvailablePaymentMethods {
					if a.Type == escrow.PaymentWireTransfer {
						amount = strings.TrimSpace(a.Total.String() + " " + string(a.Currency))
					}
				}
			}
			return d, func(w io.Writer) {
				tw := newTable(w)
				fmt.Fprintf(tw, "Amount to wire\t%s\n", amount)
				fmt.Fprintf(tw, "Bank\t%s\n", d.BankName)
				fmt.Fprintf(tw, "Bank address\t%s\n", orDash(d.BankAddress))
				fmt.Fprintf(tw, "Routing number\t%s\n", orDash(d.RoutingNumber))
				fmt.Fprintf(tw, "SWIFT\t%s\n", orDash(d.SwiftCode))
				fmt.Fprintf(tw, "Account name\t%s\n", d.CreditAccountName)
				fmt.Fprintf(tw, "Account number\t%s\n", d.CreditAccountNumber)
				fmt.Fprintf(tw, "Instructions\t%s\n", orDash(d.AdditionalInstructions))
				tw.Flush()
				fmt.Fprintf(w, "\nOnce the wire is sent at the bank: escrow transactions pay wire-sent %d\n", id)
			}, nil
		})
}

// runPayWireSent is "escrow transactions pay wire-sent ID": the buyer reports the wire
// sent; the funds are secured when they arrive.
func runPayWireSent(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions pay wire-sent"
	var id int64
	return apiCommand(ctx, name, name+" ID", args, stdout, stderr, true, nil, transactionID(&id),
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			// The answer's shape is not documented: --json prints it as the API sent it.
			// People get the transaction, read afresh (without As-Customer, which reading
			// does not take) when the answer is not one.
			sent, err := client.Transactions.MarkWireSent(ctx, id, opts...)
			if err != nil {
				return nil, nil, err
			}
			tx := sent.Transaction
			if tx == nil {
				tx, err = client.Transactions.Get(ctx, id)
			}
			return sent.Raw, func(w io.Writer) {
				fmt.Fprintf(w, "wire reported sent: the funds are secured when they arrive.\n\n")
				printTransaction(w, tx)
			}, err
		})
}

// runDisbursementList is "escrow transactions disbursement list ID".
func runDisbursementList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions disbursement list"
	var id int64
	return apiCommand(ctx, name, name+" ID", args, stdout, stderr, false, nil, transactionID(&id),
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			m, err := client.Transactions.GetDisbursementMethods(ctx, id, opts...)
			return m, func(w io.Writer) { printDisbursementMethods(w, m) }, err
		})
}

// runDisbursementSelect is "escrow transactions disbursement select ID METHOD_ID": one of
// the caller's saved methods.
func runDisbursementSelect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions disbursement select"
	var id, method int64
	return apiCommand(ctx, name, name+" ID METHOD_ID\n\nMETHOD_ID is a saved method's id, as 'disbursement list' shows", args, stdout, stderr, false, nil,
		func(positional []string) (err error) {
			if err = want("a transaction id", "a saved method's id")(positional); err != nil {
				return err
			}
			if id, err = parseID("transaction id", positional[0]); err != nil {
				return err
			}
			method, err = parseID("method id", positional[1])
			return err
		},
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			m, err := client.Transactions.SelectDisbursementMethod(ctx, id, &escrow.DisbursementMethod{ID: method}, opts...)
			if err != nil {
				return nil, nil, err
			}
			outcome := payoutOutcome(ctx, client, id)
			return m, func(w io.Writer) {
				fmt.Fprintf(w, "method %d selected: %s\n\n", method, outcome)
				printDisbursementMethods(w, m)
			}, nil
		})
}

// runDisbursementAdd is "escrow transactions disbursement add ID": new bank details, saved
// and selected. The account number and the IBAN are secrets: on the command line every user
// of the machine can read them (ps), so --from-file takes the details from a file or
// standard input instead, and giving them as flags draws a warning.
func runDisbursementAdd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow transactions disbursement add"
	var id int64
	var file, fromFile string
	var dm escrow.DisbursementMethod
	var fs *flag.FlagSet
	return apiCommand(ctx, name, name+" ID (--file F | --from-file F | --type t --account-name n --bank-name b [--account-number n] [--routing-number r] [--account-type t] [--swift s] [--iban i] [--currency c])\n\n"+
		"ach needs --account-name, --account-type, --routing-number, --account-number and --bank-name;\n"+
		"wire types --account-name, --bank-name, --swift and one of --account-number or --iban.\n"+
		"--from-file F (\"-\": standard input) holds any of these as name=value lines (account-number=000123456789),\n"+
		"so that the account number stays off the command line, where every user of the machine can read it.", args, stdout, stderr, false,
		func(set *flag.FlagSet) {
			fs = set
			fs.StringVar(&file, "file", "", "read the method, as the API's JSON, from `file` (\"-\": standard input)")
			fs.StringVar(&fromFile, "from-file", "", "read bank details as name=value lines, named as these flags, from `file` (\"-\": standard input)")
			fs.Func("type", "the method's `type`: ach, wire_transfer or wire_transfer_international", func(s string) error {
				dm.Type = escrow.DisbursementMethodType(s)
				return nil
			})
			fs.StringVar(&dm.AccountName, "account-name", "", "the account holder's `name`")
			fs.StringVar(&dm.AccountType, "account-type", "", "ach: checking or savings (`type`)")
			fs.StringVar(&dm.BankABARoutingNumber, "routing-number", "", "ach: the bank's ABA routing `number`")
			fs.StringVar(&dm.BankAccountNumber, "account-number", "", "the account `number` (better in --from-file: a command line is visible to every user)")
			fs.StringVar(&dm.BankName, "bank-name", "", "the bank's `name`")
			fs.StringVar(&dm.BankSwiftCode, "swift", "", "wire types: the bank's SWIFT `code`")
			fs.StringVar(&dm.BankIBAN, "iban", "", "wire types: the account's `IBAN` (better in --from-file)")
			fs.Func("currency", "the `currency` to be paid in", func(s string) error {
				dm.Currency = escrow.Currency(strings.ToLower(s))
				return nil
			})
		},
		func(positional []string) (err error) {
			if err = transactionID(&id)(positional); err != nil {
				return err
			}
			return disbursementDetails(fs, file, fromFile, &dm, stderr)
		},
		func(ctx context.Context, client *escrow.Client, opts []escrow.RequestOption) (any, func(io.Writer), error) {
			m, err := client.Transactions.SelectDisbursementMethod(ctx, id, &dm, opts...)
			if err != nil {
				return nil, nil, err
			}
			outcome := payoutOutcome(ctx, client, id)
			return m, func(w io.Writer) {
				fmt.Fprintf(w, "%s added and selected: %s\n\n", dm.Type, outcome)
				printDisbursementMethods(w, m)
			}, nil
		})
}

// detailFlags are the flags of "disbursement add" that give a method's details one by one;
// secretDetailFlags those among them that are secrets.
var (
	detailFlags       = []string{"type", "account-name", "account-type", "routing-number", "account-number", "bank-name", "swift", "iban", "currency"}
	secretDetailFlags = []string{"account-number", "iban"}
)

// disbursementDetails fills dm from --file, or from --from-file and the flags, and warns
// about secrets given on the command line.
func disbursementDetails(fs *flag.FlagSet, file, fromFile string, dm *escrow.DisbursementMethod, stderr io.Writer) error {
	details := slices.ContainsFunc(detailFlags, func(n string) bool { return isSet(fs, n) })
	switch {
	case file != "" && (details || fromFile != ""):
		return usagef("--file holds the whole method: give it alone, or the flags and --from-file without it")
	case file != "":
		*dm = escrow.DisbursementMethod{}
		return readJSONFile(file, dm)
	}
	warnSecretFlags(fs, stderr)
	if fromFile != "" {
		if err := readDetailFile(fs, fromFile); err != nil {
			return err
		}
	}
	if dm.Type == "" {
		return usagef("missing --type (or give the whole method with --file)")
	}
	return nil
}

// warnSecretFlags warns about each secret detail given on the command line.
func warnSecretFlags(fs *flag.FlagSet, stderr io.Writer) {
	for _, n := range secretDetailFlags {
		if isSet(fs, n) {
			fmt.Fprintf(stderr, "escrow transactions disbursement add: warning: --%s on the command line is visible to every user of this machine (ps) and kept in shell history: put it in a --from-file file, or pipe it in with --from-file -\n", n)
		}
	}
}

// readDetailFile sets detail flags from name=value lines ("-": standard input); blank lines
// and lines starting with # are skipped. A detail the command line gives too is refused:
// neither should silently win.
func readDetailFile(fs *flag.FlagSet, file string) error {
	data, err := readFileOrStdin(file)
	if err != nil {
		return usagef("--from-file: %v", err)
	}
	df := detailFile{fs: fs, name: file, onCommandLine: map[string]bool{}}
	fs.Visit(func(f *flag.Flag) { df.onCommandLine[f.Name] = true })
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := df.set(n+1, line); err != nil {
			return err
		}
	}
	return nil
}

// detailFile is a --from-file file of details being read into the flags.
type detailFile struct {
	fs            *flag.FlagSet
	name          string
	onCommandLine map[string]bool // the flags the command line set
}

// set sets the detail flag one name=value line gives.
func (df detailFile) set(lineNo int, line string) error {
	k, v, ok := strings.Cut(line, "=")
	k = strings.TrimPrefix(strings.TrimSpace(k), "--")
	switch {
	case !ok || !slices.Contains(detailFlags, k):
		// The line is not quoted: it may be a secret.
		return usagef("--from-file %s, line %d: want name=value with name one of %s", df.name, lineNo, strings.Join(detailFlags, ", "))
	case df.onCommandLine[k]:
		return usagef("--from-file %s gives %s, which the command line gives too: give it once", df.name, k)
	}
	if err := df.fs.Set(k, strings.TrimSpace(v)); err != nil {
		return usagef("--from-file %s, line %d: %s: %v", df.name, lineNo, k, err)
	}
	return nil
}

// readFileOrStdin reads a file, or standard input for "-".
func readFileOrStdin(file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	}
	return os.ReadFile(file)
}

// payoutOutcome says what selecting a method did, from the transaction read afresh: the
// funds of goods already accepted went out at once; otherwise they go out on acceptance.
func payoutOutcome(ctx context.Context, client *escrow.Client, id int64) string {
	tx, err := client.Transactions.Get(ctx, id)
	if err != nil {
		return "the funds go out once the goods are accepted."
	}
	if paid := tx.Totals().Disbursed; !paid.IsZero() {
		return fmt.Sprintf("the transaction is %s, paid out %s %s.", tx.State(), paid, tx.Currency)
	}
	return "the funds go out once the goods are accepted."
}

// printDisbursementMethods shows what the caller may be paid by, with the totals, their
// saved methods and the one selected. Account numbers are shortened to their last four
// digits: enough to recognise one, not enough to copy it off a screen.
func printDisbursementMethods(w io.Writer, m *escrow.DisbursementMethods) {
	tw := newTable(w)
	fmt.Fprintln(tw, "AVAILABLE\tTOTAL\tCURRENCY")
	for _, a := range m.AvailableDisbursementMethods {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", a.Type, a.Total, orDash(string(a.Currency)))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "SAVED\tTYPE\tACCOUNT NAME\tBANK\tACCOUNT\tSELECTED")
	selected := m.SelectedDisbursementMethod
	for _, s := range m.SavedDisbursementMethods {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", s.ID, s.Type, orDash(s.AccountName), orDash(s.BankName),
			lastFour(s.BankAccountNumber+s.BankIBAN), yesNo(selected != nil && selected.ID == s.ID))
	}
	tw.Flush()
	if selected == nil {
		fmt.Fprintln(w, "\nNo method is selected: the funds wait after acceptance until one is.")
	}
}

// lastFour shows the end of an account number, or "-".
func lastFour(s string) string {
	if len(s) <= 4 {
		return orDash(s)
	}
	return "…" + s[len(s)-4:]
}
