import { Body, Controller, Get, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ChannelPauses,
  DISCARD_STATES,
  InvalidOperationInputError,
  MAX_RECENT_CYCLE_LIMIT,
  NOTIFICATION_LIST_STATES,
  OUTBOX_LIST_STATES,
  OperationRefusedError,
  OperationsStatus,
  TerminalRedrive,
} from '@pin/notifications-retry';
import { AdminAuth, type AdminPrincipal } from './admin-auth';
import { adminErrorStatus } from './admin-error-status';
import { AdminNotFoundError, AdminUnauthorizedError } from './admin-request-errors';
import { shownDetail, shownOutboxRow, shownSummary } from './console-shown-fields';
import { adminViews, type PageFrame } from './admin-views';
import { ChannelOverview } from './channel-overview';
import { setConsoleHeaders } from './console-headers';
import { ConsoleOperations } from './console-operations';
import {
  idsField,
  readAuditQuery,
  readDiscardFilter,
  readHours,
  readOutboxState,
  readRowsQuery,
  textField,
} from './console-query';
import { cycleSeries } from './cycle-series';
import { SignInLimitedError } from './sign-in-limited.error';

const PAGE_SIZE = 50;

const STATUS_TITLES: Readonly<Record<number, string>> = {
  403: 'Forbidden',
  404: 'Not found',
  429: 'Too many attempts',
};

type Fields = Record<string, unknown>;

/**
 * The operator console: server-rendered Eta pages, htmx refreshing lists and
 * counts, forms posting back with the CSRF token and a redirect after each
 * change (the notice in the query string).
 */
@Controller('admin')
export class AdminPageController {
  private readonly logger = new Logger('AdminPage');

  constructor(
    private readonly auth: AdminAuth,
    private readonly status: OperationsStatus,
    private readonly redrive: TerminalRedrive,
    private readonly pauses: ChannelPauses,
    private readonly operations: ConsoleOperations,
    private readonly channels: ChannelOverview,
  ) {}

  @Get()
  overview(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    return this.page(
      request,
      response,
      query,
      { section: 'overview', template: 'overview', title: 'Overview' },
      async () => ({
        status: await this.status.status(),
        ...(await this.countsView()),
      }),
    );
  }

  @Get('fragments/counts')
  countsFragment(@Req() request: Request, @Res() response: Response) {
    return this.fragment(request, response, async () =>
      adminViews.fragment('overview-counts', await this.countsView()),
    );
  }

  @Get('rows')
  async rows(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    const id = textField(query, 'id');
    if (id !== undefined) {
      // Search by NotificationId: straight to its page.
      return this.guard(request, response, () => {
        response.redirect(303, `/admin/notifications/${encodeURIComponent(id)}`);
        return Promise.resolve();
      });
    }
    return this.page(
      request,
      response,
      query,
      { section: 'rows', template: 'rows', title: 'Notifications' },
      () => this.rowsView(query),
    );
  }

  @Get('fragments/rows')
  rowsFragment(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    return this.fragment(request, response, async () =>
      adminViews.fragment('rows-table', await this.rowsView(query)),
    );
  }

  @Get('notifications/:id')
  notification(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Query() query: Fields,
  ) {
    return this.page(
      request,
      response,
      query,
      { section: 'rows', template: 'notification', title: `Notification ${id}` },
      async () => {
        const found = await this.operations.browser.get(id);
        if (found === null) throw new AdminNotFoundError('No notification has this id.');
        const n = shownDetail(found);
        const claimed = n.claimedUntil !== null && new Date(n.claimedUntil).getTime() > Date.now();
        const terminal = n.status === 'Failed' && n.nextAttemptAt === null;
        return {
          notification: n,
          claimed,
          terminal,
          discardable: !claimed && !terminal && n.status !== 'Sent',
        };
      },
    );
  }

  @Post('notifications/:id/discard')
  discardOne(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: Fields,
  ) {
    return this.action(request, response, async (principal) => {
      const result = await this.operations.discard.discard(
        { ids: [id] },
        this.operator(principal, body),
      );
      return {
        to: `/admin/notifications/${encodeURIComponent(id)}`,
        notice: `Discarded ${result.rows} row(s) (audit ${result.actionId}).`,
      };
    });
  }

  @Post('notifications/:id/redrive')
  redriveOne(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: Fields,
  ) {
    return this.action(request, response, async (principal) => {
      const result = await this.redrive.redrive({
        filter: { ids: [id] },
        dryRun: false,
        operator: this.operator(principal, body),
      });
      return {
        to: `/admin/notifications/${encodeURIComponent(id)}`,
        notice: `Redriven ${result.redriven} row(s) (audit ${result.actionId ?? '-'}).`,
      };
    });
  }

  /** The dry run of a bulk action: how many rows, then a form that asks for the reason. */
  @Get('bulk')
  bulkPreview(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    const action = textField(query, 'action') === 'redrive' ? 'redrive' : 'discard';
    return this.page(
      request,
      response,
      query,
      { section: 'rows', template: 'bulk', title: `Bulk ${action}: dry run` },
      async () => {
        const ids = idsField(query);
        const filter = {
          state: textField(query, 'state'),
          channel: textField(query, 'channel'),
          errorCode: textField(query, 'errorCode'),
          since: textField(query, 'since'),
        };
        if (action === 'redrive') {
          const result = await this.redrive.redrive({
            filter: this.redriveFilter(query),
            dryRun: true,
          });
          return { action, ids, filter, count: result.eligible, claimed: result.claimed };
        }
        const preview = await this.operations.discard.preview(readDiscardFilter(query));
        return { action, ids, filter, count: preview.rows, claimed: 0 };
      },
    );
  }

  @Post('bulk')
  bulkApply(@Req() request: Request, @Res() response: Response, @Body() body: Fields) {
    return this.action(request, response, async (principal) => {
      const back = `/admin/rows${query({
        state: textField(body, 'state'),
        channel: textField(body, 'channel'),
        errorCode: textField(body, 'errorCode'),
        since: textField(body, 'since'),
      })}`;
      if (textField(body, 'action') === 'redrive') {
        const result = await this.redrive.redrive({
          filter: this.redriveFilter(body),
          dryRun: false,
          operator: this.operator(principal, body),
        });
        return {
          to: back,
          notice: `Redriven ${result.redriven} row(s) (audit ${result.actionId ?? '-'}).`,
        };
      }
      // A filter matches what arrives after its dry run too: a discard ends rows for good, so it
      // goes ahead only if it would not touch more rows than the operator was shown.
      const filter = readDiscardFilter(body);
      const previewed = previewedRows(body);
      const now = (await this.operations.discard.preview(filter)).rows;
      if (now > previewed) {
        throw new OperationRefusedError(
          'bulk discard',
          `${now} row(s) match the filter now, ${previewed} were shown in the dry run: run it again`,
        );
      }
      const result = await this.operations.discard.discard(filter, this.operator(principal, body));
      return { to: back, notice: `Discarded ${result.rows} row(s) (audit ${result.actionId}).` };
    });
  }

  @Get('channels')
  channelsPage(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    return this.page(
      request,
      response,
      query,
      { section: 'channels', template: 'channels', title: 'Channels' },
      async () => ({
        channels: await this.channels.list(),
      }),
    );
  }

  @Get('fragments/channels')
  channelsFragment(@Req() request: Request, @Res() response: Response) {
    // The whole page; htmx keeps only #channels-live (hx-select).
    return this.page(
      request,
      response,
      {},
      { section: 'channels', template: 'channels', title: 'Channels' },
      async () => ({
        channels: await this.channels.list(),
      }),
    );
  }

  @Post('channels/pause')
  pause(@Req() request: Request, @Res() response: Response, @Body() body: Fields) {
    return this.action(request, response, async (principal) => {
      const change = await this.pauses.pause(
        textField(body, 'channel') ?? '',
        this.operator(principal, body),
      );
      return {
        to: '/admin/channels',
        notice: change.changed
          ? `Paused ${change.channel}.`
          : `${change.channel} was already paused.`,
      };
    });
  }

  @Post('channels/resume')
  resume(@Req() request: Request, @Res() response: Response, @Body() body: Fields) {
    return this.action(request, response, async (principal) => {
      const change = await this.pauses.resume(
        textField(body, 'channel') ?? '',
        this.operator(principal, body),
      );
      return {
        to: '/admin/channels',
        notice: change.changed ? `Resumed ${change.channel}.` : `${change.channel} was not paused.`,
      };
    });
  }

  @Get('cycles')
  cycles(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    return this.page(
      request,
      response,
      query,
      { section: 'cycles', template: 'cycles', title: 'Cycles' },
      async () => {
        const hours = readHours(query);
        // Every cycle of the window the chart covers, up to the library's cap (two days at one a minute).
        const cycles = await this.operations.cycles.list({ hours, limit: MAX_RECENT_CYCLE_LIMIT });
        return { hours, cycles: cycles.slice(0, PAGE_SIZE), series: cycleSeries(cycles) };
      },
    );
  }

  @Get('outbox')
  outbox(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    return this.page(
      request,
      response,
      query,
      { section: 'outbox', template: 'outbox', title: 'Outbox' },
      async () => {
        const state = readOutboxState(query);
        const after = textField(query, 'after');
        const [counts, page] = await Promise.all([
          this.operations.outbox.counts(),
          this.operations.outbox.list({ state, limit: PAGE_SIZE, ...(after ? { after } : {}) }),
        ]);
        return {
          state,
          states: OUTBOX_LIST_STATES,
          counts,
          page: { ...page, rows: page.rows.map(shownOutboxRow) },
        };
      },
    );
  }

  @Get('fragments/outbox-counts')
  outboxCountsFragment(@Req() request: Request, @Res() response: Response) {
    return this.fragment(request, response, async () =>
      adminViews.fragment('outbox-counts', { counts: await this.operations.outbox.counts() }),
    );
  }

  @Post('outbox/:id/requeue')
  requeue(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: Fields,
  ) {
    return this.action(request, response, async (principal) => {
      await this.operations.outbox.requeue(id, this.operator(principal, body));
      return { to: '/admin/outbox?state=unpublished', notice: `Re-queued event ${id}.` };
    });
  }

  @Get('audit')
  audit(@Req() request: Request, @Res() response: Response, @Query() query: Fields) {
    return this.page(
      request,
      response,
      query,
      { section: 'audit', template: 'audit', title: 'Audit log' },
      async () => {
        const { shown, search } = readAuditQuery(query, PAGE_SIZE);
        return { query: shown, page: await this.operations.audit.search(search) };
      },
    );
  }

  @Post('login')
  login(@Req() request: Request, @Res() response: Response, @Body() body: Fields): void {
    setConsoleHeaders(response);
    try {
      this.auth.login(request, response, body?.token);
      response.redirect(303, '/admin');
    } catch (error) {
      const status = adminErrorStatus(error) ?? 500;
      if (error instanceof SignInLimitedError) {
        response.setHeader('Retry-After', String(error.retryAfterSeconds));
      }
      response
        .status(status)
        .type('html')
        .send(
          status === 401
            ? this.loginPage('Wrong admin token.')
            : this.messagePage(status === 429 ? 'Too many attempts' : 'Refused', error),
        );
    }
  }

  @Post('logout')
  logout(@Req() request: Request, @Res() response: Response) {
    return this.guard(request, response, () => {
      this.auth.logout(request, response);
      response.redirect(303, '/admin');
      return Promise.resolve();
    });
  }

  private async countsView(): Promise<Fields> {
    return {
      states: NOTIFICATION_LIST_STATES.filter((s) => s !== 'sent'),
      counts: await this.operations.browser.counts(),
      refreshedAt: new Date(),
    };
  }

  private async rowsView(query: Fields): Promise<Fields> {
    const rows = readRowsQuery(query, PAGE_SIZE);
    const page = await this.operations.browser.list(rows.list);
    return {
      query: rows.shown,
      states: NOTIFICATION_LIST_STATES,
      discardable: (DISCARD_STATES as readonly string[]).includes(rows.shown.state),
      page: { ...page, rows: page.rows.map(shownSummary) },
    };
  }

  private redriveFilter(source: Fields) {
    const ids = idsField(source);
    const discard = readDiscardFilter({ ...source, state: undefined });
    return {
      ...(ids.length > 0 ? { ids } : {}),
      ...(discard.channel ? { channel: discard.channel } : {}),
      ...(discard.errorCode ? { errorCode: discard.errorCode } : {}),
      ...(discard.since ? { since: discard.since } : {}),
    };
  }

  private operator(principal: AdminPrincipal, body: Fields) {
    return { actor: principal.actor, reason: typeof body.reason === 'string' ? body.reason : '' };
  }

  private async page(
    request: Request,
    response: Response,
    query: Fields,
    where: { readonly section: string; readonly template: string; readonly title: string },
    load: () => Promise<Fields>,
  ): Promise<void> {
    await this.guard(request, response, async (principal) => {
      const frame: PageFrame = {
        title: where.title,
        section: where.section,
        csrf: principal.pageCsrf,
        canSignOut: this.auth.usesLogin,
        notice: textField(query, 'notice') ?? null,
      };
      const data = await load();
      response.type('html').send(adminViews.page(where.template, frame, data));
    });
  }

  private async fragment(
    request: Request,
    response: Response,
    render: () => Promise<string>,
  ): Promise<void> {
    await this.guard(request, response, async () => {
      response.type('html').send(await render());
    });
  }

  private async action(
    request: Request,
    response: Response,
    act: (principal: AdminPrincipal) => Promise<{ to: string; notice: string }>,
  ): Promise<void> {
    await this.guard(request, response, async (principal) => {
      const { to, notice } = await act(principal);
      response.redirect(
        303,
        `${to}${to.includes('?') ? '&' : '?'}${new URLSearchParams({ notice }).toString()}`,
      );
    });
  }

  private async guard(
    request: Request,
    response: Response,
    handle: (principal: AdminPrincipal) => Promise<void>,
  ): Promise<void> {
    setConsoleHeaders(response);
    try {
      await handle(await this.auth.authenticate(request, response));
    } catch (error) {
      const status = adminErrorStatus(error);
      if (status === null) {
        this.logger.error({
          msg: 'admin-page-failed',
          error: error instanceof Error ? error.name : 'unknown',
        });
        response.status(500).type('html').send(this.messagePage('Error', null));
      } else if (error instanceof AdminUnauthorizedError && this.auth.usesLogin) {
        response.status(401).type('html').send(this.loginPage(null));
      } else {
        response
          .status(status)
          .type('html')
          .send(this.messagePage(STATUS_TITLES[status] ?? 'Refused', error));
      }
    }
  }

  private loginPage(error: string | null): string {
    return adminViews.page(
      'login',
      { title: 'Sign in', section: 'login', csrf: '', canSignOut: false, error },
      {},
    );
  }

  private messagePage(title: string, error: unknown): string {
    return adminViews.page(
      'message',
      { title, section: 'message', csrf: '', canSignOut: false },
      {
        message: error instanceof Error ? error.message : 'The request failed; see the app log.',
      },
    );
  }
}

function query(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The row count the dry run showed, posted back with the confirmation. */
function previewedRows(body: Fields): number {
  const text = textField(body, 'previewed');
  const rows = text === undefined ? Number.NaN : Number(text);
  if (!Number.isSafeInteger(rows) || rows < 0) {
    throw new InvalidOperationInputError(
      'previewed',
      `must be the row count of the dry run; got ${text === undefined ? 'none' : JSON.stringify(text)}`,
    );
  }
  return rows;
}
