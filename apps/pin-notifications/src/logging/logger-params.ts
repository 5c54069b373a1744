import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import type pino from 'pino';

/** nestjs-pino settings: Nest and request logs go through `root`. */
export function loggerParams(root: pino.Logger): Params {
  return {
    pinoHttp: {
      logger: root,
      // Probes and scrapes call every few seconds; a line each would bury the worker's own lines.
      autoLogging: { ignore: (req: IncomingMessage) => isProbe(req.url) },
    },
  };
}

function isProbe(url: string | undefined): boolean {
  const path = url?.split('?')[0]?.replace(/\/$/, '');
  return path === '/health' || path === '/metrics';
}
