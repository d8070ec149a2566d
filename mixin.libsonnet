// ceph-perfwatch as a monitoring mixin (the convention of node-mixin and ceph-mixin):
//
//   local perfwatch = import 'ceph-perfwatch/mixin.libsonnet';
//   perfwatch.prometheusRules     // recording rules: { groups: [...] }
//   perfwatch.prometheusAlerts    // alerts: { groups: [...] }
//   perfwatch.grafanaDashboards   // { 'perfwatch-bottlenecks.json': {...}, ... }
//
// The rules and dashboards are generated in Python from one config (alerts/profiles.py, dashboards/) and
// committed; this file only exposes them. `_config.profile` picks the rules' profile: 'production' (ship
// this) or 'lab' (short windows, for the lab). To change a threshold, edit alerts/profiles.py and run
// `python3 -m alerts.generate` and `python3 -m dashboards.generate`: the panels draw the same thresholds.
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

{
  _config+:: {
    profile: 'production',
  },

  prometheusRules+:: rules[$._config.profile].recording,
  prometheusAlerts+:: rules[$._config.profile].alerts,

  grafanaDashboards+:: {
    'perfwatch-bottlenecks.json': import 'dashboards/generated/bottlenecks.json',
    'perfwatch-osd-detail.json': import 'dashboards/generated/osd-detail.json',
    'perfwatch-bluestore.json': import 'dashboards/generated/bluestore.json',
    'perfwatch-rgw-bucket-index.json': import 'dashboards/generated/rgw-bucket-index.json',
    'perfwatch-benchmarks.json': import 'dashboards/generated/benchmarks.json',
  },
}
