import { Body, Controller, Get, Logger, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ChannelPauses,
  OperationsStatus,
  TerminalFailures,
  TerminalRedrive,
} from '@pin/notifications-retry';
import { AdminAuth, type AdminPrincipal } from './admin-auth';
import { adminErrorStatus } from './admin-error-status';
import { readFilter } from './admin-filter';
import {
  dashboardPage,
  loginPage,
  messagePage,
  redrivePreviewPage,
  type PageFilter,
} from './admin-html';
import { AdminUnauthorizedError } from './admin-request-errors';

const LIST_LIMIT = 50;

/** The admin page: server-rendered HTML, forms posting back with the CSRF token, a redirect after each change. */
@Controller('admin')
export class AdminPageController {
  private readonly logger = new Logger('AdminPage');

  constructor(
    private readonly auth: AdminAuth,
    private readonly status: OperationsStatus,
    private readonly terminal: TerminalFailures,
    private readonly redrive: TerminalRedrive,
    private readonly pauses: ChannelPauses,
  ) {}

  @Get()
  async dashboard(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    await this.page(request, response, async (principal) => {
      const notice = typeof query.notice === 'string' ? query.notice : null;
      let error: string | null = null;
      let filtered = readFilter({});
      try {
        filtered = readFilter(query);
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      const [status, stats, rows] = await Promise.all([
        this.status.status(),
        this.terminal.stats(filtered.filter),
        this.terminal.list(filtered.filter, LIST_LIMIT),
      ]);
      response.type('html').send(
        dashboardPage({
          status,
          stats,
          rows,
          filter: filtered.page,
          csrf: principal.pageCsrf,
          notice,
          error,
          canSignOut: this.auth.usesLogin,
        }),
      );
    });
  }

  @Post('login')
  login(
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): void {
    try {
      this.auth.login(request, response, body?.token);
      response.redirect(303, '/admin');
    } catch (error) {
      const status = adminErrorStatus(error) ?? 500;
      response
        .status(status)
        .type('html')
        .send(
          status === 401
            ? loginPage('Wrong admin token.')
            : messagePage('Refused', (error as Error).message),
        );
    }
  }

  @Post('logout')
  async logout(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.page(request, response, () => {
      this.auth.logout(request, response);
      response.redirect(303, '/admin');
      return Promise.resolve();
    });
  }

  @Get('redrive')
  async preview(
    @Req() request: Request,
    @Res() response: Response,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    await this.page(request, response, async (principal) => {
      const { page, filter } = readFilter(query);
      const result = await this.redrive.redrive({ filter, dryRun: true });
      response.type('html').send(redrivePreviewPage(result, page, principal.pageCsrf));
    });
  }

  @Post('redrive')
  async apply(
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    await this.page(request, response, async (principal) => {
      const { page, filter } = readFilter(body);
      const result = await this.redrive.redrive({
        filter,
        dryRun: false,
        operator: {
          actor: principal.actor,
          reason: typeof body.reason === 'string' ? body.reason : '',
        },
      });
      this.redirect(
        response,
        page,
        `Redriven ${result.redriven} row(s) (audit ${result.actionId ?? '-'}).`,
      );
    });
  }

  @Post('channels/pause')
  async pause(
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    await this.page(request, response, async (principal) => {
      const change = await this.pauses.pause(typeof body.channel === 'string' ? body.channel : '', {
        actor: principal.actor,
        reason: typeof body.reason === 'string' ? body.reason : '',
      });
      this.redirect(
        response,
        {},
        change.changed ? `Paused ${change.channel}.` : `${change.channel} was already paused.`,
      );
    });
  }

  @Post('channels/resume')
  async resume(
    @Req() request: Request,
    @Res() response: Response,
    @Body() body: Record<string, unknown>,
  ): Promise<void> {
    await this.page(request, response, async (principal) => {
      const change = await this.pauses.resume(
        typeof body.channel === 'string' ? body.channel : '',
        {
          actor: principal.actor,
          reason: typeof body.reason === 'string' ? body.reason : '',
        },
      );
      this.redirect(
        response,
        {},
        change.changed ? `Resumed ${change.channel}.` : `${change.channel} was not paused.`,
      );
    });
  }

  private redirect(response: Response, filter: PageFilter, notice: string): void {
    const params = new URLSearchParams({ ...(filter as Record<string, string>), notice });
    response.redirect(303, `/admin?${params.toString()}`);
  }

  private async page(
    request: Request,
    response: Response,
    handle: (principal: AdminPrincipal) => Promise<void>,
  ): Promise<void> {
    try {
      await handle(await this.auth.authenticate(request, response));
    } catch (error) {
      const status = adminErrorStatus(error);
      if (status === null) {
        this.logger.error({
          msg: 'admin-page-failed',
          error: error instanceof Error ? error.name : 'unknown',
        });
        response
          .status(500)
          .type('html')
          .send(messagePage('Error', 'The request failed; see the app log.'));
      } else if (error instanceof AdminUnauthorizedError && this.auth.usesLogin) {
        response.status(401).type('html').send(loginPage(null));
      } else {
        response
          .status(status)
          .type('html')
          .send(messagePage(status === 403 ? 'Forbidden' : 'Refused', (error as Error).message));
      }
    }
  }
}
