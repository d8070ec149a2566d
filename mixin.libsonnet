// ceph-perfwatch as a monitoring mixin (the convention of node-mixin and ceph-mixin):
//
//   local perfwatch = import 'ceph-perfwatch/mixin.libsonnet';
//   perfwatch.prometheusRules     // recording rules: { groups: [...] }
//   perfwatch.prometheusAlerts    // alerts: { groups: [...] }
//   perfwatch.grafanaDashboards   // { 'perfwatch-bottlenecks.json': {...}, ... }
//
// The rules and dashboards are generated in Python from one config (alerts/profiles.py, dashboards/) and
// committed; this file exposes them and sets the two things an operator chooses at deployment:
// `_config.profile` picks the rules' profile: 'production' (ship this) or 'lab' (short windows, for the
// lab); `_config.runbookURL` is where alerts/runbook.md is read, for instance on your own wiki:
//
//   perfwatch + { _config+:: { runbookURL: 'https://wiki.example/ceph/perfwatch-runbook.html' } }
//
// To change a threshold, edit alerts/profiles.py and run `python3 -m alerts.generate` and
// `python3 -m dashboards.generate`: the panels draw the same thresholds.
local rules = {
  production: {
    recording: import 'alerts/generated/production/recording.json',
    alerts: import 'alerts/generated/production/alerts.json',
  },
  lab: {
    recording: import 'alerts/generated/lab/recording.json',
    alerts: import 'alerts/generated/lab/alerts.json',
  },
};

local dashboards = {
  'perfwatch-bottlenecks.json': import 'dashboards/generated/bottlenecks.json',
  'perfwatch-osd-detail.json': import 'dashboards/generated/osd-detail.json',
  'perfwatch-bluestore.json': import 'dashboards/generated/bluestore.json',
  'perfwatch-rgw-bucket-index.json': import 'dashboards/generated/rgw-bucket-index.json',
  'perfwatch-benchmarks.json': import 'dashboards/generated/benchmarks.json',
};

// The runbook's address in the generated files (alerts/alerting.py's RUNBOOK_URL; tests/unit/alerts/test_mixin.py
// checks that the two are the same): links that start with it are rewritten to start with `runbookURL`.
local generatedRunbookURL = 'https://github.com/ceph-perfwatch/ceph-perfwatch/blob/main/alerts/runbook.md';

// A link into the runbook, moved to `base`; any other value as it is.
local rebase(link, base) =
  if std.isString(link) && std.startsWith(link, generatedRunbookURL)
  then base + std.substr(link, std.length(generatedRunbookURL), std.length(link) - std.length(generatedRunbookURL))
  else link;

// An alert whose `documentation` (and `runbook_url`, if it has one) annotation leads to `base` + '#' + its
// section; every other field as generated.
local withRunbook(rule, base) =
  if std.objectHas(rule, 'annotations') then
    rule {
      annotations+: {
        [key]: rebase(rule.annotations[key], base)
        for key in ['documentation', 'runbook_url']
        if std.objectHas(rule.annotations, key)
      },
    }
  else rule;

// A dashboard whose links (its own and its panels') into the runbook lead to `base`; all else as generated.
local dashboardWithRunbook(value, base) =
  if std.isArray(value) then [dashboardWithRunbook(v, base) for v in value]
  else if std.isObject(value) then {
    [key]: if key == 'url' then rebase(value[key], base) else dashboardWithRunbook(value[key], base)
    for key in std.objectFields(value)
  }
  else value;

{
  _config+:: {
    profile: 'production',
    // Where alerts/runbook.md is served. Each alert's `documentation` link, and each dashboard's runbook
    // link, is this + '#' + the section's anchor (the alert's name in lower case), so a page hosted
    // elsewhere must keep the runbook's `## AlertName` headings as its anchors.
    runbookURL: generatedRunbookURL,
  },

  prometheusRules+:: rules[$._config.profile].recording,
  prometheusAlerts+:: rules[$._config.profile].alerts {
    groups: [
      group { rules: [withRunbook(rule, $._config.runbookURL) for rule in group.rules] }
      for group in super.groups
    ],
  },

  grafanaDashboards+:: {
    [name]: dashboardWithRunbook(dashboards[name], $._config.runbookURL)
    for name in std.objectFields(dashboards)
  },
}
