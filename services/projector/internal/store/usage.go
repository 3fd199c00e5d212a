package store

// UsageFilter selects usage rows. Days are YYYY-MM-DD (UTC), inclusive; ""
// does not bound.
type UsageFilter struct {
	Tenant       string // required: rows of this tenant only (u/<tenant>/)
	Since, Until string
	Model        string
}

// maxUsageRows bounds one usage answer.
const maxUsageRows = 100000

// Usage returns token and cost sums by day and model, in day then model
// order, and their total. truncated reports that more rows matched than one
// answer holds.
func (d *DB) Usage(f UsageFilter) (rows []Usage, total Usage, truncated bool, err error) {
	prefix := usagePrefix(f.Tenant)
	lower := []byte(prefix + f.Since)
	upper := prefixEnd(prefix)
	if f.Until != "" {
		upper = prefixEnd(prefix + f.Until + "/")
	}
	all := f.Tenant == AllTenants // tenant by tenant; the days are matched on the rows
	if all {
		lower, upper = []byte(pUsage), prefixEnd(pUsage)
	}
	r := d.read()
	defer r.close()
	it, err := r.iter(lower, upper)
	if err != nil {
		return nil, Usage{}, false, err
	}
	defer it.Close()
	rows = []Usage{}
	for ok := it.First(); ok; ok = it.Next() {
		var u Usage
		if err := unmarshal(it.Key(), it.Value(), &u); err != nil {
			return nil, Usage{}, false, err
		}
		if f.Model != "" && u.Model != f.Model || all && (u.Day < f.Since || f.Until != "" && u.Day > f.Until) {
			continue
		}
		if len(rows) == maxUsageRows {
			truncated = true
			break
		}
		rows = append(rows, u)
		total.Calls += u.Calls
		total.Cost += u.Cost
		total.Tokens.Input += u.Tokens.Input
		total.Tokens.Output += u.Tokens.Output
		total.Tokens.CacheRead += u.Tokens.CacheRead
		total.Tokens.CacheWrite += u.Tokens.CacheWrite
		total.Tokens.Total += u.Tokens.Total
	}
	return rows, total, truncated, it.Error()
}
