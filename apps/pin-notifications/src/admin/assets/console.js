// The cycles chart: the page carries its series in data-series (escaped JSON), uPlot draws it.
(function () {
  'use strict';
  function draw() {
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
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', draw);
  else draw();
})();
