package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// Employee is stored twice in its department's partition: under RowKey "empid_<id>" and
// under "email_<address>". Both copies carry every property, so either lookup is one query.
type Employee struct {
	PartitionKey string // department
	RowKey       string // "empid_000223" or "email_jonesj@contoso.com"
	EmployeeID   string
	FirstName    string
	LastName     string
	Email        string
	Age          int
}

// Result is what the run found, for the test.
type Result struct {
	ByID, ByEmail   Employee   // employee 000223 found through each index
	AfterEmailMove  Employee   // found by the new address after the atomic update
	OldEmailMatches int        // entities still under the old address (0)
	IDRange         []Employee // employees 000100-000199, in id order
	EmailsA         []Employee // addresses starting with "a", in address order
	Scan            []Employee // the same lookup by a non-key property (finds both copies)
}

const table = "EmployeesIntraIndex"

// Run creates the table, loads a department, looks employees up through both indexes,
// changes an address atomically, and deletes the table again.
func Run(ctx context.Context, svc *aztables.ServiceClient, out io.Writer) (Result, error) {
	var res Result
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return res, fmt.Errorf("create table: %w", err)
	}
	defer svc.DeleteTable(context.WithoutCancel(ctx), table, nil)
	t := svc.NewClient(table)

	// Each employee is written with one entity group transaction: both copies or neither.
	for i := 100; i < 300; i++ {
		e := Employee{PartitionKey: "Sales", EmployeeID: fmt.Sprintf("%06d", i),
			FirstName: "Emp", LastName: fmt.Sprintf("L%d", i), Email: fmt.Sprintf("%c%d@contoso.com", 'a'+i%26, i), Age: 20 + i%40}
		if i == 223 {
			e.FirstName, e.LastName, e.Email = "John", "Jones", "jonesj@contoso.com"
		}
		if err := insert(ctx, t, e); err != nil {
			return res, err
		}
	}
	fmt.Fprintln(out, "loaded 200 employees into partition Sales, two entities each (one transaction per employee)")

	var err error
	if res.ByID, err = one(ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'empid_000223'"); err != nil {
		return res, err
	}
	if res.ByEmail, err = one(ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'email_jonesj@contoso.com'"); err != nil {
		return res, err
	}
	if res.IDRange, err = query(ctx, out, t, "PartitionKey eq 'Sales' and RowKey ge 'empid_000100' and RowKey le 'empid_000199'"); err != nil {
		return res, err
	}
	if res.EmailsA, err = query(ctx, out, t, "PartitionKey eq 'Sales' and RowKey ge 'email_a' and RowKey lt 'email_b'"); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "  %d employees with ids 000100-000199, %d addresses starting with a\n", len(res.IDRange), len(res.EmailsA))
	// Without the index, finding someone by address reads the whole partition.
	if res.Scan, err = query(ctx, out, t, "PartitionKey eq 'Sales' and Email eq 'jonesj@contoso.com'"); err != nil {
		return res, err
	}

	// Changing the address touches three entities: the new email_ copy is inserted, the old
	// one deleted and the empid_ copy updated, in one transaction.
	if err := changeEmail(ctx, t, res.ByID, "john.jones@contoso.com"); err != nil {
		return res, err
	}
	fmt.Fprintln(out, "changed 000223's address to john.jones@contoso.com in one transaction")
	if res.AfterEmailMove, err = one(ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'email_john.jones@contoso.com'"); err != nil {
		return res, err
	}
	old, err := query(ctx, out, t, "PartitionKey eq 'Sales' and RowKey eq 'email_jonesj@contoso.com'")
	res.OldEmailMatches = len(old)
	return res, err
}

// insert adds both copies of e atomically.
func insert(ctx context.Context, t *aztables.Client, e Employee) error {
	byID, byEmail := e, e
	byID.RowKey, byEmail.RowKey = "empid_"+e.EmployeeID, "email_"+e.Email
	return submit(ctx, t, action(aztables.TransactionTypeAdd, byID), action(aztables.TransactionTypeAdd, byEmail))
}

// changeEmail moves e's email_ copy to a new address and updates its empid_ copy, atomically.
func changeEmail(ctx context.Context, t *aztables.Client, e Employee, email string) error {
	oldRow := "email_" + e.Email
	e.Email = email
	byID, byEmail := e, e
	byID.RowKey, byEmail.RowKey = "empid_"+e.EmployeeID, "email_"+email
	gone := Employee{PartitionKey: e.PartitionKey, RowKey: oldRow}
	return submit(ctx, t,
		action(aztables.TransactionTypeUpdateReplace, byID),
		action(aztables.TransactionTypeAdd, byEmail),
		action(aztables.TransactionTypeDelete, gone))
}

func action(kind aztables.TransactionType, e Employee) aztables.TransactionAction {
	b, _ := json.Marshal(e) // a struct of strings and an int always marshals
	return aztables.TransactionAction{ActionType: kind, Entity: b}
}

func submit(ctx context.Context, t *aztables.Client, actions ...aztables.TransactionAction) error {
	if _, err := t.SubmitTransaction(ctx, actions, nil); err != nil {
		return fmt.Errorf("transaction: %w", err)
	}
	return nil
}

// one runs a point query and returns its entity.
func one(ctx context.Context, out io.Writer, t *aztables.Client, filter string) (Employee, error) {
	es, err := query(ctx, out, t, filter)
	if err != nil {
		return Employee{}, err
	}
	if len(es) != 1 {
		return Employee{}, fmt.Errorf("%s: %d entities, want 1", filter, len(es))
	}
	fmt.Fprintf(out, "  found %s %s %s <%s>\n", es[0].EmployeeID, es[0].FirstName, es[0].LastName, es[0].Email)
	return es[0], nil
}

// query returns every entity matching filter, in key order.
func query(ctx context.Context, out io.Writer, t *aztables.Client, filter string) ([]Employee, error) {
	fmt.Fprintf(out, "query $filter=%s\n", filter)
	var es []Employee
	pager := t.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", filter, err)
		}
		for _, b := range page.Entities {
			var e Employee
			if err := json.Unmarshal(b, &e); err != nil {
				return nil, err
			}
			es = append(es, e)
		}
	}
	return es, nil
}
