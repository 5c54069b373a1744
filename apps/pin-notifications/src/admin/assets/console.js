// The console's only script of its own (no inline script: the CSP allows none).
(function () {
  'use strict';

  // A list refresh would drop the rows an operator has ticked: skip it while any is.
  document.addEventListener('htmx:confirm', function (event) {
    var target = event.target;
    if (target && target.id === 'rows' && target.querySelector('input:checked')) {
      event.preventDefault();
    }
  });

  // The cycles chart: the page carries its series in data-series (escaped JSON), uPlot draws it.
  function drawCycles() {
    var target = document.getElementById('cycles-chart');
    if (!target || typeof uPlot === 'undefined') return;
    var series = JSON.parse(
      target.getAttribute('data-series') || '{"at":[],"sent":[],"retried":[],"terminal":[]}',
    );
    var width = Math.max(320, Math.min(target.parentElement.clientWidth || 900, 1200));
    new uPlot(
      {
        width: width,
        height: 260,
        series: [
          {},
          { label: 'sent', stroke: '#2a7d2a', width: 2 },
          { label: 'retried', stroke: '#b58900', width: 2 },
          { label: 'terminal', stroke: '#c0392b', width: 2 },
        ],
        axes: [{}, { label: 'rows per cycle' }],
      },
      [series.at, series.sent, series.retried, series.terminal],
      target,
    );
  }
  // After every deferred script: uplot.js comes later in the page than this one.
  document.addEventListener('DOMContentLoaded', drawCycles);
})();
