import type {
  OperationsStatusReport,
  RedriveResult,
  TerminalFailureRow,
  TerminalFailureStat,
} from '@pin/notifications-retry';

/** Server-rendered HTML of the admin page: no script, no framework, nothing personal (addresses come masked). */

export function escapeHtml(value: unknown): string {
  const text =
    value instanceof Date
      ? value.toISOString()
      : typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? value.toString()
          : value === null || value === undefined
            ? ''
            : JSON.stringify(value);
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface PageFilter {
  readonly channel?: string;
  readonly errorCode?: string;
  readonly since?: string;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:2rem;max-width:80rem}table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}th{background:#f3f3f3}.notice{background:#e7f6e7;padding:.5rem}
.error{background:#fde8e8;padding:.5rem}form.inline{display:inline}input{margin-right:.25rem}`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="referrer" content="same-origin"><style>${STYLE}</style></head><body>${body}</body></html>`;
}

const csrfField = (csrf: string): string =>
  `<input type="hidden" name="_csrf" value="${escapeHtml(csrf)}">`;

function filterFields(filter: PageFilter): string {
  return (['channel', 'errorCode', 'since'] as const)
    .map((name) =>
      filter[name] === undefined
        ? ''
        : `<input type="hidden" name="${name}" value="${escapeHtml(filter[name])}">`,
    )
    .join('');
}

function filterQuery(filter: PageFilter): string {
  const params = new URLSearchParams();
  for (const name of ['channel', 'errorCode', 'since'] as const) {
    if (filter[name] !== undefined) params.set(name, filter[name]);
  }
  const query = params.toString();
  return query ? `?${query}` : '';
}

export function loginPage(error: string | null): string {
  return layout(
    'Notifications admin: sign in',
    `<h1>Notifications admin</h1>${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/admin/login"><label>Admin token <input type="password" name="token" autocomplete="current-password" required></label>
<button type="submit">Sign in</button></form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1><p class="error" role="alert">${escapeHtml(message)}</p><p><a href="/admin">Back</a></p>`,
  );
}

export interface DashboardView {
  readonly status: OperationsStatusReport;
  readonly stats: readonly TerminalFailureStat[];
  readonly rows: readonly TerminalFailureRow[];
  readonly filter: PageFilter;
  readonly csrf: string;
  readonly notice: string | null;
  readonly error: string | null;
  readonly canSignOut: boolean;
}

export function dashboardPage(view: DashboardView): string {
  const { status, filter, csrf } = view;
  const lease = status.lease
    ? `owner <code>${escapeHtml(status.lease.owner)}</code>, fencing token ${status.lease.fencingToken}, ${status.lease.live ? 'live' : 'expired'}, expires ${escapeHtml(status.lease.expiresAt)} (database now ${escapeHtml(status.lease.databaseNow)})`
    : 'none yet';
  const channels = status.channels
    .map(
      (c) =>
        `<tr data-channel="${escapeHtml(c.channel)}"><td>${escapeHtml(c.channel)}</td><td>${c.backlog}</td><td>${c.due}</td><td>${c.deferred}</td><td>${c.terminal}</td><td>${c.liveClaims}</td></tr>`,
    )
    .join('');
  const paused = status.pausedChannels
    .map(
      (
        p,
      ) => `<li data-paused="${escapeHtml(p.channel)}">${escapeHtml(p.channel)}: paused ${escapeHtml(p.pausedAt)} by ${escapeHtml(p.pausedBy)} (${escapeHtml(p.reason)})
<form class="inline" method="post" action="/admin/channels/resume">${csrfField(csrf)}<input type="hidden" name="channel" value="${escapeHtml(p.channel)}">
<input name="reason" placeholder="reason" required aria-label="Resume reason for ${escapeHtml(p.channel)}"><button type="submit">Resume</button></form></li>`,
    )
    .join('');
  const stats = view.stats
    .map(
      (s) =>
        `<tr><td>${escapeHtml(s.channel)}</td><td>${escapeHtml(s.errorCode ?? '-')}</td><td>${s.count}</td><td>${escapeHtml(s.oldest)}</td><td>${escapeHtml(s.newest)}</td></tr>`,
    )
    .join('');
  const rows = view.rows
    .map(
      (r) =>
        `<tr class="terminal-row"><td>${escapeHtml(r.id)}</td><td>${escapeHtml(r.channel)}</td><td>${escapeHtml(r.maskedAddress)}</td><td>${r.attempts}</td><td>${escapeHtml(r.errorCode ?? '-')}</td><td>${escapeHtml(r.failedAt)}</td></tr>`,
    )
    .join('');
  return layout(
    'Notifications admin',
    `<h1>Notifications admin</h1>
${view.canSignOut ? `<form class="inline" method="post" action="/admin/logout">${csrfField(csrf)}<button type="submit">Sign out</button></form>` : ''}
${view.notice ? `<p class="notice" role="status">${escapeHtml(view.notice)}</p>` : ''}
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
<h2>Status</h2>
<p>Lease: ${lease}</p>
<p>Left out of the claim: ${escapeHtml(status.excludedChannels.map((e) => `${e.channel} (${e.reason})`).join(', ') || 'none')}</p>
<table id="channels"><thead><tr><th>Channel</th><th>Backlog</th><th>Due</th><th>Deferred</th><th>Terminal</th><th>Live claims</th></tr></thead><tbody>${channels}</tbody></table>
<h3>Paused channels</h3><ul id="paused">${paused || '<li>none</li>'}</ul>
<form method="post" action="/admin/channels/pause">${csrfField(csrf)}
<input name="channel" placeholder="channel" required aria-label="Channel to pause"><input name="reason" placeholder="reason" required aria-label="Pause reason">
<button type="submit">Pause channel</button></form>
<h2>Terminal failures</h2>
<form id="filter" method="get" action="/admin">
<input name="channel" placeholder="channel" value="${escapeHtml(filter.channel)}" aria-label="Channel">
<input name="errorCode" placeholder="error code" value="${escapeHtml(filter.errorCode)}" aria-label="Error code">
<input name="since" placeholder="since (24h, 7d, ISO)" value="${escapeHtml(filter.since)}" aria-label="Since">
<button type="submit">Filter</button></form>
<table id="stats"><thead><tr><th>Channel</th><th>Error code</th><th>Count</th><th>Oldest</th><th>Newest</th></tr></thead><tbody>${stats}</tbody></table>
<table id="terminal"><thead><tr><th>Id</th><th>Channel</th><th>Address (masked)</th><th>Attempts</th><th>Error code</th><th>Failed at</th></tr></thead><tbody>${rows}</tbody></table>
<p><a id="preview-redrive" href="/admin/redrive${filterQuery(filter)}">Preview redrive of these rows</a></p>`,
  );
}

export function redrivePreviewPage(
  result: RedriveResult,
  filter: PageFilter,
  csrf: string,
): string {
  const groups = result.preview
    .map(
      (g) =>
        `<tr><td>${escapeHtml(g.channel)}</td><td>${escapeHtml(g.errorCode ?? '-')}</td><td>${g.eligible}</td><td>${g.claimed}</td></tr>`,
    )
    .join('');
  return layout(
    'Redrive preview',
    `<h1>Redrive preview (dry run)</h1>
<p id="preview-summary">${result.eligible} row(s) would be redriven; ${result.claimed} left alone (a worker holds them). Nothing has changed yet.</p>
<table><thead><tr><th>Channel</th><th>Error code</th><th>Would be redriven</th><th>Live claim</th></tr></thead><tbody>${groups}</tbody></table>
<p>Never redrive address errors (invalid address, unregistered device): see docs/runbooks/terminal-failures.md.</p>
<form method="post" action="/admin/redrive">${csrfField(csrf)}${filterFields(filter)}
<input name="reason" placeholder="reason (for the audit)" required aria-label="Redrive reason">
<button type="submit" id="confirm-redrive"${result.eligible === 0 ? ' disabled' : ''}>Redrive ${result.eligible} row(s)</button></form>
<p><a href="/admin${filterQuery(filter)}">Cancel</a></p>`,
  );
}
