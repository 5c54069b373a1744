#!/usr/bin/env bash
# Checks observability/ (DESIGN.md section 5: metric names are a contract with dashboards and alerts):
#   1. the Grafana dashboard JSON parses, and every metric name that it, the alert rules and their
#      tests use is one the worker exposes (and, where the library's metric-names.ts is present,
#      one it still defines);
#   2. every alert rule's runbook_url points at a heading of a runbook in docs/runbooks/;
#   3. with promtool: the alert rules are valid (promtool check rules), their unit tests pass
#      (promtool test rules), prometheus.yml is valid, and the dashboard's queries parse as PromQL.
# Without promtool (Debian: `apt-get install prometheus` provides it) step 2 is an error when CI is
# set (.ci/run installs it) and is skipped, saying so, otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

RULES=observability/prometheus/alert-rules.yml
RULE_TESTS=observability/prometheus/alert-rules.test.yml
PROM_CONFIG=observability/prometheus/prometheus.yml
DASHBOARD=observability/grafana/dashboards/notifications-retry.json
METRIC_NAMES_TS=libs/notifications-retry/src/observability/metric-names.ts
OUTBOX_METRIC_NAMES_TS=libs/notifications-retry/src/outbox/outbox-metric-names.ts

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "check-alert-rules: dashboard JSON and metric names"
# Writes the dashboard's queries as recording rules to $tmp/dashboard-queries.rules.json (JSON is
# YAML) so that promtool can parse them below.
node - "$DASHBOARD" "$RULES" "$RULE_TESTS" "$METRIC_NAMES_TS" "$tmp/dashboard-queries.rules.json" "$OUTBOX_METRIC_NAMES_TS" <<'NODE'
const fs = require('fs');
const [dashboardPath, rulesPath, testsPath, metricNamesTs, queriesOut, outboxMetricNamesTs] = process.argv.slice(2);

// The worker's metrics (libs/notifications-retry/src/observability/metric-names.ts).
const COUNTERS_AND_GAUGES = [
  'notifications_retry_processed_total',
  'notifications_retry_sent_total',
  'notifications_retry_retried_total',
  'notifications_retry_terminal_failed_total',
  'notifications_retry_deferred_total',
  'notifications_retry_item_errors_total',
  'notifications_retry_lease_skipped_total',
  'notifications_failed_backlog_gauge',
  'notifications_retry_channel_disabled_rows',
  'notifications_retry_channels_excluded',
  'notifications_retry_circuit_state',
  'notifications_retry_last_cycle_timestamp_seconds',
  'notifications_retry_late_answers_total',
  'notifications_retry_database_client_errors_total',
  'notifications_retry_calls_in_flight',
  // The outbox relay (libs/notifications-retry/src/outbox/outbox-metric-names.ts).
  'notifications_outbox_unpublished_rows',
  'notifications_outbox_oldest_unpublished_age_seconds',
  'notifications_outbox_parked_rows',
  'notifications_outbox_published_total',
  'notifications_outbox_parked_total',
  'notifications_outbox_publish_failures_total',
  'notifications_outbox_retention_deleted_total',
  'notifications_outbox_relay_last_pass_timestamp_seconds',
];
const HISTOGRAMS = [
  'notifications_retry_cycle_duration_ms',
  'notifications_retry_claim_duration_ms',
  'notifications_retry_settle_duration_ms',
  'notifications_retry_lag_ms',
  'notifications_outbox_publish_duration_ms',
];
const CONTRACT = [...COUNTERS_AND_GAUGES, ...HISTOGRAMS];
const ALLOWED = new Set([
  ...COUNTERS_AND_GAUGES,
  ...HISTOGRAMS.flatMap((h) => [`${h}_bucket`, `${h}_count`, `${h}_sum`]),
]);
// PromQL words that are not metric names (functions are recognised by the "(" after them).
const KEYWORDS = new Set(
  'by without on ignoring group_left group_right bool offset and or unless inf nan'.split(' '),
);

const errors = [];
const fail = (msg) => errors.push(msg);

// Identifiers of a PromQL expression that stand for metric names.
function metricNames(expr) {
  const s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // string literals
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // range and subquery selectors
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // label lists
  const names = [];
  for (const m of s.matchAll(/(?<![a-zA-Z0-9_:.$])[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const id = m[0];
    const isCall = /^\s*\(/.test(s.slice(m.index + id.length));
    if (isCall || KEYWORDS.has(id.toLowerCase())) continue;
    names.push(id);
  }
  return names;
}

// 1. The dashboard.
let dashboard;
try {
  dashboard = JSON.parse(fs.readFileSync(dashboardPath, 'utf8'));
} catch (e) {
  console.error(`check-alert-rules: ${dashboardPath} is not valid JSON: ${e.message}`);
  process.exit(1);
}
if (!(dashboard.schemaVersion >= 38)) fail(`${dashboardPath}: schemaVersion ${dashboard.schemaVersion} is below 38`);

const queries = []; // { where, expr }
const datasourceUids = new Set();
(function walk(node, where) {
  if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${where}[${i}]`));
  if (!node || typeof node !== 'object') return;
  const here = node.title ? `${where} "${node.title}"` : node.name ? `${where} $${node.name}` : where;
  if (node.datasource && typeof node.datasource === 'object' && node.datasource.type === 'prometheus') {
    datasourceUids.add(node.datasource.uid);
  }
  if (typeof node.expr === 'string') queries.push({ where: here, expr: node.expr });
  for (const [key, value] of Object.entries(node)) {
    if (key === 'datasource') continue;
    walk(value, `${here}.${key}`);
  }
})(dashboard, 'dashboard');

for (const v of dashboard.templating?.list ?? []) {
  if (v.type !== 'query') continue;
  const q = typeof v.query === 'string' ? v.query : v.query?.query ?? v.definition ?? '';
  const lv = /^\s*label_values\(\s*(.+?)\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/.exec(q);
  if (lv) queries.push({ where: `templating $${v.name}`, expr: lv[1] });
  else if (q.trim()) queries.push({ where: `templating $${v.name}`, expr: q.replace(/^\s*query_result\((.*)\)\s*$/, '$1') });
}

for (const uid of datasourceUids) {
  if (uid !== '${DS_PROMETHEUS}' && uid !== 'prometheus') {
    fail(`${dashboardPath}: Prometheus datasource uid "${uid}" is neither \${DS_PROMETHEUS} nor prometheus`);
  }
}
if (queries.length === 0) fail(`${dashboardPath}: no Prometheus queries found`);

const used = new Set();
for (const { where, expr } of queries) {
  const names = metricNames(expr);
  if (names.length === 0 && !/\btime\(\)|\bvector\(/.test(expr)) fail(`${dashboardPath} ${where}: no metric in query: ${expr}`);
  for (const name of names) {
    used.add(name);
    if (!ALLOWED.has(name)) fail(`${dashboardPath} ${where}: unknown metric "${name}" in: ${expr}`);
  }
}

// 2. The alert rules and their tests (plain text scan: every notifications_* metric name).
for (const file of [rulesPath, testsPath]) {
  const text = fs.readFileSync(file, 'utf8');
  for (const [name] of text.matchAll(/\bnotifications_[a-z0-9_]+/g)) {
    if (!ALLOWED.has(name)) fail(`${file}: unknown metric "${name}"`);
  }
}

// 3. The library's own list, when it is there: a rename there must show here.
const namesFiles = [metricNamesTs, outboxMetricNamesTs].filter((f) => f && fs.existsSync(f));
if (namesFiles.length > 0) {
  const defined = new Set(
    namesFiles.flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/'(notifications_[a-z0-9_]+)'/g)].map((m) => m[1])),
  );
  for (const name of CONTRACT) {
    if (!defined.has(name)) fail(`${namesFiles.join(' / ')} no longer define "${name}", which observability/ uses`);
  }
}

// 4. Every alert names its runbook: runbook_url is docs/runbooks/<file>.md#<heading>, the file exists
// and has that heading (GitHub's anchor of it), so an alert never sends on-call to a dead link.
{
  const text = fs.readFileSync(rulesPath, 'utf8');
  const slug = (heading) =>
    heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
  const blocks = text.split(/^\s*- alert:\s*/m).slice(1);
  if (blocks.length === 0) fail(`${rulesPath}: no alert rules found`);
  let linked = 0;
  for (const block of blocks) {
    const name = block.split(/\s/)[0];
    const url = /^\s*runbook_url:\s*(\S+)\s*$/m.exec(block)?.[1];
    if (!url) { fail(`${rulesPath}: alert ${name} has no runbook_url annotation`); continue; }
    const m = /^(docs\/runbooks\/[a-z0-9-]+\.md)#([a-z0-9-]+)$/.exec(url);
    if (!m) { fail(`${rulesPath}: alert ${name}: runbook_url ${url} is not docs/runbooks/<file>.md#<heading>`); continue; }
    if (!fs.existsSync(m[1])) { fail(`${rulesPath}: alert ${name}: runbook ${m[1]} does not exist`); continue; }
    const anchors = new Set(
      [...fs.readFileSync(m[1], 'utf8').matchAll(/^#{1,6}\s+(.+)$/gm)].map((h) => slug(h[1])),
    );
    if (!anchors.has(m[2])) fail(`${rulesPath}: alert ${name}: ${m[1]} has no heading for #${m[2]}`);
    else linked++;
  }
  if (linked === blocks.length) console.log(`  OK: all ${linked} alert rules link to a runbook heading that exists`);
}

if (errors.length) {
  for (const e of errors) console.error(`check-alert-rules: ${e}`);
  process.exit(1);
}

// Grafana variables replaced by values that parse, for promtool.
const groundVariables = (expr) =>
  expr
    .replace(/\$\{?__(rate_interval|interval|range)\}?/g, '5m')
    .replace(/\$\{?([a-zA-Z_][a-zA-Z0-9_]*)(:[a-z]+)?\}?/g, '.*');
fs.writeFileSync(
  queriesOut,
  JSON.stringify({
    groups: [
      {
        name: 'dashboard-queries',
        rules: queries.map((q, i) => ({ record: `dashboard_query:${i + 1}`, expr: groundVariables(q.expr) })),
      },
    ],
  }),
);
const unused = CONTRACT.filter((m) => ![...used].some((u) => u === m || u.startsWith(`${m}_`)));
console.log(
  `  OK: ${dashboardPath} (schemaVersion ${dashboard.schemaVersion}, ${queries.length} queries, ` +
    `${used.size} metric names, all known${unused.length ? `; not charted: ${unused.join(', ')}` : ''})`,
);
NODE

if ! command -v promtool >/dev/null 2>&1; then
  if [ -n "${CI:-}" ] && [ "${CI}" != "false" ] && [ "${CI}" != "0" ]; then
    echo "check-alert-rules: FAILED: promtool is not installed, so the alert rules and their unit tests cannot be checked." >&2
    echo "  CI is set, where this is an error: .ci/run installs it (apt-get install prometheus, which provides promtool)." >&2
    exit 1
  fi
  echo "check-alert-rules: alert rules NOT checked: promtool is not installed (Debian: apt-get install prometheus)."
  echo "  Not an error outside CI (CI is unset or false): $RULES and $RULE_TESTS were not validated."
  exit 0
fi

echo "check-alert-rules: $(promtool --version 2>&1 | head -n 1)"
promtool check rules "$RULES"
promtool test rules "$RULE_TESTS"
promtool check config "$PROM_CONFIG"
echo "check-alert-rules: dashboard queries parse as PromQL"
promtool check rules "$tmp/dashboard-queries.rules.json"
echo "check-alert-rules: all checks passed"
