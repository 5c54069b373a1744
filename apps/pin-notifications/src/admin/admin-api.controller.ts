import { Body, Controller, Get, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ChannelPauses,
  DEFAULT_TERMINAL_LIST_LIMIT,
  OperationsStatus,
  TerminalFailures,
  TerminalRedrive,
} from '@pin/notifications-retry';
import { parsePositiveInteger } from '@pin/notifications-retry/ops-cli';
import { AdminAuth, type AdminPrincipal } from './admin-auth';
import { adminErrorStatus } from './admin-error-status';
import { SignInLimitedError } from './sign-in-limited.error';
import { readFilter } from './admin-filter';
import { AdminNotFoundError } from './admin-request-errors';
import { ChannelOverview } from './channel-overview';
import { ConsoleOperations } from './console-operations';
import {
  readAuditQuery,
  readDiscardFilter,
  readHours,
  readOutboxState,
  readRowsQuery,
  textField,
} from './console-query';
import { shownDetail, shownOutboxRow, shownSummary } from './console-shown-fields';

/** Page size of the console's lists when the request names none. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

/**
 * The admin API: the page's data and actions as JSON, for scripts (Bearer
 * ADMIN_TOKEN) or the signed-in browser (session cookie + X-CSRF-Token).
 */
@Controller('admin/api')
export class AdminApiController {
  private readonly logger = new Logger('AdminApi');

  constructor(
    private readonly auth: AdminAuth,
    private readonly status: OperationsStatus,
    private readonly terminal: TerminalFailures,
    private readonly redrive: TerminalRedrive,
    private readonly pauses: ChannelPauses,
    private readonly operations: ConsoleOperations,
    private readonly channels: ChannelOverview,
  ) {}

  /** Per channel: due, deferred, claimed, retrying, terminal, sent in the last hour. */
  @Get('counts')
  counts(@Req() request: Request, @Res() response: Response): Promise<void> {
    return this.json(request, response, async () => ({
      counts: await this.operations.browser.counts(),
    }));
  }

  /** Query: state (due|deferred|claimed|retrying|terminal|sent), channel, errorCode, since, after (cursor), limit. */
  @Get('notifications')
  notifications(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async () => {
      const page = await this.operations.browser.list(readRowsQuery(query, limitOf(query)).list);
      return { rows: page.rows.map(shownSummary), next: page.next };
    });
  }

  @Get('notifications/:id')
  notification(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
  ): Promise<void> {
    return this.json(request, response, async () => {
      const found = await this.operations.browser.get(id);
      if (!found) throw new AdminNotFoundError('no notification has this id');
      return shownDetail(found);
    });
  }

  /** Body: ids[] and/or channel, errorCode, since, state (due|deferred|retrying); dryRun (default true); reason. */
  @Post('discard')
  discard(
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async (principal) => {
      const filter = readDiscardFilter(body);
      if (body.dryRun !== false) {
        return { dryRun: true, ...(await this.operations.discard.preview(filter)) };
      }
      return {
        dryRun: false,
        ...(await this.operations.discard.discard(filter, {
          actor: principal.actor,
          reason: typeof body.reason === 'string' ? body.reason : '',
        })),
      };
    });
  }

  @Get('channels')
  channelList(@Req() request: Request, @Res() response: Response): Promise<void> {
    return this.json(request, response, async () => ({ channels: await this.channels.list() }));
  }

  /** Query: hours (1..48, default 6). */
  @Get('cycles')
  cycles(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async () => {
      const listed = await this.operations.cycles.list({
        hours: readHours(query),
        limit: limitOf(query),
      });
      return { cycles: listed };
    });
  }

  /** Query: state (unpublished|parked, default parked), after, limit. */
  @Get('outbox')
  outbox(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async () => {
      const after = textField(query, 'after');
      const page = await this.operations.outbox.list({
        state: readOutboxState(query),
        limit: limitOf(query),
        ...(after ? { after } : {}),
      });
      return { rows: page.rows.map(shownOutboxRow), next: page.next };
    });
  }

  @Get('outbox/counts')
  outboxCounts(@Req() request: Request, @Res() response: Response): Promise<void> {
    return this.json(request, response, () => this.operations.outbox.counts());
  }

  @Post('outbox/:id/requeue')
  requeue(
    @Req() request: Request,
    @Res() response: Response,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async (principal) => ({
      requeued: id,
      ...(await this.operations.outbox.requeue(id, {
        actor: principal.actor,
        reason: typeof body.reason === 'string' ? body.reason : '',
      })),
    }));
  }

  /** Query: actor, action, since, text (reason contains), after, limit. Newest first. */
  @Get('audit')
  audit(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, () =>
      this.operations.audit.search(readAuditQuery(query, limitOf(query)).search),
    );
  }

  @Get('status')
  getStatus(@Req() request: Request, @Res() response: Response): Promise<void> {
    return this.json(request, response, () => this.status.status());
  }

  @Get('terminal')
  list(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async () => {
      const limit =
        typeof query.limit === 'string'
          ? parsePositiveInteger('limit', query.limit, 1_000)
          : DEFAULT_TERMINAL_LIST_LIMIT;
      return { rows: await this.terminal.list(readFilter(query).filter, limit) };
    });
  }

  @Get('terminal/stats')
  stats(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, async () => ({
      stats: await this.terminal.stats(readFilter(query).filter),
    }));
  }

  /** Body: channel, errorCode, since, ids[], all, dryRun (default true), reason. */
  @Post('redrive')
  postRedrive(
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, (principal) => {
      const ids = Array.isArray(body.ids) ? body.ids.map(String) : undefined;
      const dryRun = body.dryRun !== false;
      return this.redrive.redrive({
        filter: { ...readFilter(body).filter, ...(ids ? { ids } : {}) },
        all: body.all === true,
        dryRun,
        ...(dryRun
          ? {}
          : {
              operator: {
                actor: principal.actor,
                reason: typeof body.reason === 'string' ? body.reason : '',
              },
            }),
      });
    });
  }

  @Post('channels/:key/pause')
  pause(
    @Req() request: Request,
    @Res() response: Response,
    @Param('key') key: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, (principal) =>
      this.pauses.pause(key, {
        actor: principal.actor,
        reason: typeof body.reason === 'string' ? body.reason : '',
      }),
    );
  }

  @Post('channels/:key/resume')
  resume(
    @Req() request: Request,
    @Res() response: Response,
    @Param('key') key: string,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    return this.json(request, response, (principal) =>
      this.pauses.resume(key, {
        actor: principal.actor,
        reason: typeof body.reason === 'string' ? body.reason : '',
      }),
    );
  }

  private async json(
    request: Request,
    response: Response,
    handle: (principal: AdminPrincipal) => Promise<unknown>,
  ): Promise<void> {
    // Answers name rows and operators: never cached, never sniffed as anything but JSON.
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('X-Content-Type-Options', 'nosniff');
    try {
      const principal = await this.auth.authenticate(request, response);
      response.status(200).json(await handle(principal));
    } catch (error) {
      if (error instanceof SignInLimitedError) {
        response.setHeader('Retry-After', String(error.retryAfterSeconds));
      }
      const status = adminErrorStatus(error);
      if (status === null) {
        this.logger.error({
          msg: 'admin-api-failed',
          error: error instanceof Error ? error.name : 'unknown',
        });
        response
          .status(500)
          .json({ error: { status: 500, message: 'the request failed; see the app log' } });
        return;
      }
      response.status(status).json({ error: { status, message: (error as Error).message } });
    }
  }
}

function limitOf(query: Record<string, unknown>): number {
  return typeof query.limit === 'string'
    ? parsePositiveInteger('limit', query.limit, MAX_LIMIT)
    : DEFAULT_LIMIT;
}
