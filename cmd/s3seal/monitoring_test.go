package main

// The Grafana dashboard (deploy/grafana) and the Prometheus alert rules
// (deploy/prometheus) name only series s3seal registers, with labels those
// series carry: a metric or a label renamed in Go, or misspelt in the JSON
// or YAML, fails here. The names and labels come from the registry serve
// builds (metrics.New, with the LFS module's and the Kafka listener's
// collectors), described in-process.

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"

	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/lfs"
	"github.com/s3seal/s3seal/lfs/brokers"
	"github.com/s3seal/s3seal/lfs/kafkaproxy"
	"github.com/s3seal/s3seal/metrics"
	"github.com/s3seal/s3seal/sealstore"
)

const (
	dashboardFile  = "../../deploy/grafana/s3seal-dashboard.json"
	alertRulesFile = "../../deploy/prometheus/s3seal-alerts.yaml"
	deployReadme   = "../../deploy/README.md"
)

// series is what a registered metric offers a PromQL expression: its
// labels, and whether it is a histogram (name_bucket with le, name_sum,
// name_count).
type series struct {
	labels    map[string]bool
	histogram bool
}

// targetLabels are the labels Prometheus adds to every scraped series
// (job, instance) and those Kubernetes service discovery usually copies
// from the pod (namespace, pod).
var targetLabels = []string{"job", "instance", "namespace", "pod"}

// externalSeries are the series the rules take from Prometheus itself and
// from kube-state-metrics, not from s3seal.
var externalSeries = map[string][]string{
	"up": {},
	"kube_deployment_status_replicas_available": {"deployment"},
	"kube_deployment_spec_replicas":             {"deployment"},
}

// descPattern reads a prometheus.Desc's String(): its name, constant
// labels and variable labels.
var descPattern = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", help: .*, constLabels: \{(.*)\}, variableLabels: \{([^}]*)\}\}$`)

// registeredSeries returns every series serve can register, by name.
func registeredSeries(t *testing.T) map[string]series {
	t.Helper()
	m := metrics.New("test")
	// The LFS module's and the Kafka listener's collectors, registered by
	// serve with --lfs (and --lfs-kafka-listen).
	h, err := lfs.New(lfs.Config{Store: &sealstore.Store{}, Producer: lfs.FromDiscovery(nil), Keyring: &crypto.Keyring{}, Bucket: "lfs"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := kafkaproxy.New(kafkaproxy.Config{Blobs: h, Brokers: &brokers.Forwarder{}, Advertise: "127.0.0.1:9092"})
	if err != nil {
		t.Fatal(err)
	}
	extra := append(h.Metrics().Collectors(), p.Metrics().Collectors()...)
	if err := m.Register(extra...); err != nil {
		t.Fatal(err)
	}
	out := map[string]series{}
	descs := make(chan *prometheus.Desc)
	go func() { m.Registry().Describe(descs); close(descs) }()
	for d := range descs {
		g := descPattern.FindStringSubmatch(d.String())
		if g == nil {
			t.Fatalf("cannot read the descriptor %s (has client_golang's Desc.String changed?)", d)
		}
		s := series{labels: map[string]bool{}}
		for _, kv := range regexp.MustCompile(`(\w+)="`).FindAllStringSubmatch(g[2], -1) {
			s.labels[kv[1]] = true
		}
		for _, l := range strings.Split(g[3], ",") {
			if l != "" {
				s.labels[strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")")] = true
			}
		}
		out[g[1]] = s
	}
	// Which are histograms: those a collector of that type holds, and
	// those the registry gathers as one once each observer was called.
	histograms := map[string]bool{}
	for _, c := range extra {
		switch c.(type) {
		case prometheus.Histogram, *prometheus.HistogramVec:
			ch := make(chan *prometheus.Desc, 1)
			c.Describe(ch)
			histograms[descPattern.FindStringSubmatch((<-ch).String())[1]] = true
		}
	}
	m.Request("GetObject", 200, 0, 1, time.Millisecond)
	m.Attempt("GetObject", "ok", time.Millisecond)
	m.KMSRequest("generate", "ok", time.Millisecond)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetType() == dto.MetricType_HISTOGRAM {
			histograms[f.GetName()] = true
		}
	}
	for name := range histograms {
		s := out[name]
		s.histogram = true
		out[name] = s
	}
	for name, labels := range externalSeries {
		s := series{labels: map[string]bool{}}
		for _, l := range labels {
			s.labels[l] = true
		}
		out[name] = s
	}
	return out
}

// lookup finds the series a name in an expression refers to, and the
// labels it may be matched or grouped by.
func lookup(reg map[string]series, name string) (map[string]bool, bool) {
	if s, ok := reg[name]; ok {
		return s.labels, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if s, found := reg[base]; ok && found && s.histogram {
			labels := map[string]bool{}
			for l := range s.labels {
				labels[l] = true
			}
			if suffix == "_bucket" {
				labels["le"] = true
			}
			return labels, true
		}
	}
	return nil, false
}

// promqlWords are PromQL's keywords that read like a metric name.
var promqlWords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"group_left": true, "group_right": true}

// aggregations are PromQL's aggregation operators, which a by or without
// clause may part from their parenthesis.
var aggregations = map[string]bool{"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true, "stddev": true,
	"stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true, "limitk": true, "limit_ratio": true}

// grouping are the keywords followed by a list of label names.
var grouping = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// selector is a metric named in an expression with the labels its
// matchers name.
type selector struct {
	metric string
	labels []string
}

// parsePromQL reads the metric names with their matchers' labels, and the
// labels of by, without, on, ignoring and group_ clauses, from a PromQL
// expression. It reads names, not meaning: promtool checks the syntax.
func parsePromQL(expr string) (sels []selector, grouped []string, err error) {
	s := expr
	ident := func(i int) int {
		j := i
		for j < len(s) && (s[j] == '_' || s[j] == ':' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return j
	}
	skipSpace := func(i int) int {
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
		return i
	}
	skipString := func(i int) (int, error) {
		q := s[i]
		for j := i + 1; j < len(s); j++ {
			if s[j] == '\\' && q != '`' {
				j++
			} else if s[j] == q {
				return j + 1, nil
			}
		}
		return 0, fmt.Errorf("unterminated string at %d", i)
	}
	// labelList reads "(a, b)" at i, returning the names and the index
	// after it.
	labelList := func(i int) ([]string, int, error) {
		var names []string
		for i++; i < len(s) && s[i] != ')'; {
			switch c := s[i]; {
			case c == ',' || c == ' ' || c == '\n' || c == '\t':
				i++
			case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				j := ident(i)
				names = append(names, s[i:j])
				i = j
			default:
				return nil, 0, fmt.Errorf("unexpected %q in a label list at %d", c, i)
			}
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("unterminated label list")
		}
		return names, i + 1, nil
	}
	// matchers reads "{a="x", b=~"y"}" at i.
	matchers := func(i int) ([]string, int, error) {
		var names []string
		for i++; i < len(s) && s[i] != '}'; {
			switch c := s[i]; {
			case c == '"' || c == '\'' || c == '`':
				j, err := skipString(i)
				if err != nil {
					return nil, 0, err
				}
				i = j
			case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				j := ident(i)
				names = append(names, s[i:j])
				i = j
			default:
				i++
			}
		}
		if i >= len(s) {
			return nil, 0, fmt.Errorf("unterminated matchers")
		}
		return names, i + 1, nil
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j, err := skipString(i)
			if err != nil {
				return nil, nil, err
			}
			i = j
		case c >= '0' && c <= '9' || c == '.':
			// A number or a duration (5m, 0.99, 1e3).
			for i < len(s) && (s[i] == '.' || s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
				i++
			}
		case c == '{':
			return nil, nil, fmt.Errorf("a selector without a metric name at %d", i)
		case c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := ident(i)
			word := s[i:j]
			k := skipSpace(j)
			switch {
			case grouping[word] && k < len(s) && s[k] == '(':
				names, next, err := labelList(k)
				if err != nil {
					return nil, nil, err
				}
				grouped = append(grouped, names...)
				i = next
			case promqlWords[word] || grouping[word] || aggregations[word]:
				i = j
			case k < len(s) && s[k] == '(':
				i = j // a function or an aggregation
			default:
				sel := selector{metric: word}
				i = j
				if k < len(s) && s[k] == '{' {
					names, next, err := matchers(k)
					if err != nil {
						return nil, nil, err
					}
					sel.labels = names
					i = next
				}
				sels = append(sels, sel)
			}
		default:
			i++
		}
	}
	return sels, grouped, nil
}

// checkExpr reports what in expr is not registered: a series, a label of
// one of its matchers, a label it groups by, or a label outside names
// (the legend's or an annotation's) that none of its series carries.
func checkExpr(reg map[string]series, expr string, outside []string) []string {
	sels, grouped, err := parsePromQL(expr)
	if err != nil {
		return []string{fmt.Sprintf("cannot read %q: %v", expr, err)}
	}
	if len(sels) == 0 {
		return []string{fmt.Sprintf("%q names no series", expr)}
	}
	var bad []string
	all := map[string]bool{}
	for _, l := range targetLabels {
		all[l] = true
	}
	for _, sel := range sels {
		labels, ok := lookup(reg, sel.metric)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s (in %q) is no series s3seal registers", sel.metric, expr))
			continue
		}
		for l := range labels {
			all[l] = true
		}
		for _, l := range sel.labels {
			if !labels[l] && !slices.Contains(targetLabels, l) {
				bad = append(bad, fmt.Sprintf("%s has no label %s (in %q)", sel.metric, l, expr))
			}
		}
	}
	for _, l := range append(grouped, outside...) {
		if !all[l] {
			bad = append(bad, fmt.Sprintf("label %s is on none of the series of %q", l, expr))
		}
	}
	return bad
}

// grafanaVars are the dashboard's interval variables, replaced by a
// duration before an expression is read.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// legendLabels are the labels a legend or an annotation names: {{x}} or
// {{ $labels.x }}.
var legendLabels = regexp.MustCompile(`\{\{\s*(?:\$labels\.)?([a-zA-Z_]\w*)\s*\}\}`)

func labelsNamed(text string) []string {
	var out []string
	for _, m := range legendLabels.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// dashboardExprs returns each expression of the dashboard (panels, rows'
// panels, template variables' label_values) with the labels its legend
// names, and what is wrong with the dashboard's data sources.
func dashboardExprs(t *testing.T, raw []byte) (exprs map[string][]string, problems []string) {
	t.Helper()
	type target struct {
		Expr         string         `json:"expr"`
		LegendFormat string         `json:"legendFormat"`
		Datasource   map[string]any `json:"datasource"`
	}
	type panel struct {
		Type       string         `json:"type"`
		Title      string         `json:"title"`
		Datasource map[string]any `json:"datasource"`
		Targets    []target       `json:"targets"`
		Panels     []panel        `json:"panels"`
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	exprs = map[string][]string{}
	dsVar := false
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			dsVar = dsVar || v.Name == "DS_PROMETHEUS" && v.Query == "prometheus"
		case "query":
			q, _ := v.Query.(string)
			if m, ok := v.Query.(map[string]any); ok {
				q, _ = m["query"].(string)
			}
			lv := regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`).FindStringSubmatch(q)
			if lv == nil {
				problems = append(problems, fmt.Sprintf("variable %s: %q is not label_values(series, label)", v.Name, q))
				continue
			}
			exprs[lv[1]] = append(exprs[lv[1]], lv[2])
		}
	}
	if !dsVar {
		problems = append(problems, "no data source variable DS_PROMETHEUS of type prometheus: the dashboard would not import anywhere")
	}
	promDS := func(ds map[string]any) bool { return ds["type"] == "prometheus" && ds["uid"] == "${DS_PROMETHEUS}" }
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if len(p.Targets) == 0 {
				problems = append(problems, fmt.Sprintf("panel %q has no query", p.Title))
			}
			if !promDS(p.Datasource) {
				problems = append(problems, fmt.Sprintf("panel %q: data source %v, not ${DS_PROMETHEUS}", p.Title, p.Datasource))
			}
			for _, tg := range p.Targets {
				if !promDS(tg.Datasource) {
					problems = append(problems, fmt.Sprintf("panel %q: a query's data source %v, not ${DS_PROMETHEUS}", p.Title, tg.Datasource))
				}
				e := grafanaVars.Replace(tg.Expr)
				exprs[e] = append(exprs[e], labelsNamed(tg.LegendFormat)...)
			}
		}
	}
	walk(d.Panels)
	return exprs, problems
}

// alertRule is one rule of the alert rules file.
type alertRule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// alertExprs returns each alert's expression with the labels its
// annotations name, and what is missing from each alert.
func alertExprs(t *testing.T, raw []byte, readme string) (exprs map[string][]string, problems []string) {
	t.Helper()
	var f struct {
		Groups []struct {
			Name  string      `json:"name"`
			Rules []alertRule `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(raw, &f); err != nil {
		t.Fatalf("%s: %v", alertRulesFile, err)
	}
	exprs = map[string][]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				problems = append(problems, fmt.Sprintf("a rule without an alert name: %q", r.Expr))
				continue
			}
			if r.For == "" {
				problems = append(problems, r.Alert+": no for:")
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				problems = append(problems, fmt.Sprintf("%s: severity %q, not critical or warning", r.Alert, s))
			}
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[a] == "" {
					problems = append(problems, fmt.Sprintf("%s: no %s annotation", r.Alert, a))
				}
			}
			// The runbook is deploy/README.md's section named for the alert.
			anchor := "deploy/README.md#" + strings.ToLower(r.Alert)
			if !strings.HasSuffix(r.Annotations["runbook_url"], anchor) {
				problems = append(problems, fmt.Sprintf("%s: runbook_url %q does not end in %s", r.Alert, r.Annotations["runbook_url"], anchor))
			}
			if !strings.Contains(readme, "\n#### "+r.Alert+"\n") {
				problems = append(problems, fmt.Sprintf("%s: deploy/README.md has no section #### %s", r.Alert, r.Alert))
			}
			var named []string
			for _, a := range r.Annotations {
				named = append(named, labelsNamed(strings.ReplaceAll(a, "{{ $labels.", "{{"))...)
			}
			exprs[r.Expr] = append(exprs[r.Expr], slices.DeleteFunc(named, func(l string) bool { return l == "value" })...)
		}
	}
	return exprs, problems
}

func TestDashboardAndAlertsNameRegisteredSeries(t *testing.T) {
	reg := registeredSeries(t)
	for _, name := range []string{"s3seal_requests_total", "s3seal_lfs_orphan_objects_total", "s3seal_lfs_kafka_broker_errors_total", "process_resident_memory_bytes"} {
		if _, ok := reg[name]; !ok {
			t.Fatalf("the registry lacks %s: registeredSeries is out of date", name)
		}
	}
	if s := reg["s3seal_request_duration_seconds"]; !s.histogram || !s.labels["operation"] {
		t.Fatalf("s3seal_request_duration_seconds reads as %+v, not a histogram by operation", s)
	}
	if s := reg["s3seal_lfs_kafka_request_duration_seconds"]; !s.histogram || !s.labels["api"] {
		t.Fatalf("s3seal_lfs_kafka_request_duration_seconds reads as %+v, not a histogram by api", s)
	}
	dash, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := os.ReadFile(alertRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(deployReadme)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file     string
		exprs    map[string][]string
		problems []string
		min      int
	}{
		{file: dashboardFile, min: 30},
		{file: alertRulesFile, min: 10},
	} {
		if c.file == dashboardFile {
			c.exprs, c.problems = dashboardExprs(t, dash)
		} else {
			c.exprs, c.problems = alertExprs(t, rules, string(readme))
		}
		if len(c.exprs) < c.min {
			t.Errorf("%s: read %d expressions, expected at least %d: is the file read right?", c.file, len(c.exprs), c.min)
		}
		keys := make([]string, 0, len(c.exprs))
		for e := range c.exprs {
			keys = append(keys, e)
		}
		sort.Strings(keys)
		for _, e := range keys {
			c.problems = append(c.problems, checkExpr(reg, e, c.exprs[e])...)
		}
		for _, p := range c.problems {
			t.Errorf("%s: %s", c.file, p)
		}
	}
}

// TestCheckExprRefuses holds the check itself to what it must refuse: a
// renamed metric, a renamed label in a matcher, a grouping or a legend,
// a histogram suffix on a counter.
func TestCheckExprRefuses(t *testing.T) {
	reg := registeredSeries(t)
	for _, c := range []struct {
		expr   string
		legend []string
		ok     bool
	}{
		{`sum by (operation) (rate(s3seal_requests_total{status=~"5..",job=~"$job"}[5m]))`, []string{"operation"}, true},
		{`histogram_quantile(0.99, sum by (le, operation) (rate(s3seal_backend_request_duration_seconds_bucket[5m])))`, nil, true},
		{`sum(rate(s3seal_request_total[5m]))`, nil, false},                             // renamed metric
		{`sum(rate(s3seal_requests_total{state="500"}[5m]))`, nil, false},               // renamed label in a matcher
		{`sum by (op) (rate(s3seal_requests_total[5m]))`, nil, false},                   // renamed label in by
		{`sum by (operation) (rate(s3seal_requests_total[5m]))`, []string{"op"}, false}, // legend
		{`rate(s3seal_integrity_failures_total_bucket[5m])`, nil, false},                // not a histogram
		{`rate(s3seal_requests_total{operation="x"}[5m]) / on (kind) rate(s3seal_copies_total[5m])`, nil, true},
		{`rate({__name__="s3seal_requests_total"}[5m])`, nil, false},
	} {
		got := checkExpr(reg, c.expr, c.legend)
		if (len(got) == 0) != c.ok {
			t.Errorf("checkExpr(%q, %v) = %q, want ok=%v", c.expr, c.legend, got, c.ok)
		}
	}
}
