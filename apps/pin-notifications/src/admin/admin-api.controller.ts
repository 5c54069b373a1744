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
import { readFilter } from './admin-filter';

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
  ) {}

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
    try {
      const principal = await this.auth.authenticate(request, response);
      response.status(200).json(await handle(principal));
    } catch (error) {
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
