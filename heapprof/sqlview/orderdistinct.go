package sqlview

// SELECT DISTINCT <expression> ... ORDER BY 1: go-mysql-server's planner
// moves the sort above the DISTINCT when every sort key is a select item
// (planbuilder's buildDistinct), but an ordinal's key is the select item's
// whole expression (flat_bytes*2), whose columns the DISTINCT's rows no
// longer have: "unable to find field with index N". The sort keys become
// references to the select items' columns, which the rows do have.

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// ruleOrderDistinct is orderDistinctRule's id.
const ruleOrderDistinct analyzer.RuleId = 100111

func orderDistinctRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return orderDistinctNode(n)
}

func orderDistinctNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	n, same, err := transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.Sort)
		if !ok {
			return n, transform.SameTree, nil
		}
		d, ok := s.Child.(*plan.Distinct)
		if !ok {
			return n, transform.SameTree, nil
		}
		p, ok := d.Child.(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		fields := make(sql.SortFields, len(s.SortFields))
		changed := false
		for i, f := range s.SortFields {
			fields[i] = f
			a, ok := f.Column.(*expression.Alias)
			if !ok {
				continue
			}
			for _, pe := range p.Projections {
				pa, ok := pe.(*expression.Alias)
				if !ok || pa.Id() != a.Id() || !strings.EqualFold(pa.String(), a.String()) {
					continue
				}
				fields[i].Column = expression.NewGetFieldWithTable(int(pa.Id()), 0, pa.Type(), "", "", pa.Name(), pa.IsNullable())
				changed = true
				break
			}
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewSort(fields, d), transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	// Subqueries are planned the same way.
	n, sameSub, err := transform.NodeExprsWithOpaque(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		sq, ok := e.(*plan.Subquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		q, same, err := orderDistinctNode(sq.Query)
		if err != nil || same == transform.SameTree {
			return e, transform.SameTree, err
		}
		return sq.WithQuery(q), transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && sameSub, nil
}
