import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import type pino from 'pino';

/** nestjs-pino settings: Nest and request logs go through `root`. */
export function loggerParams(root: pino.Logger): Params {
  return {
    pinoHttp: {
      logger: root,
      // Probes call /health every few seconds; a line per probe would bury the worker's own lines.
      autoLogging: { ignore: (req: IncomingMessage) => isHealthCheck(req.url) },
    },
  };
}

function isHealthCheck(url: string | undefined): boolean {
  const path = url?.split('?')[0];
  return path === '/health' || path === '/health/';
}
