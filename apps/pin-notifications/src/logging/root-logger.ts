import pino from 'pino';
import type { LogLevel } from '../config/app-config';

/**
 * The process's one pino instance: the bootstrap lines written before Nest
 * exists and everything Nest logs afterwards share its JSON shape and its
 * redaction. Plain JSON on stdout; pretty-printing is the log viewer's job.
 */
export function createRootLogger(
  level: LogLevel,
  destination?: pino.DestinationStream,
): pino.Logger {
  const options: pino.LoggerOptions = {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    // Request logs include headers; credentials in them must not reach the log store.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        // The library never logs these; a field that slips in anyway, from any code, is blanked here.
        'recipientAddress',
        'subject',
        'body',
        '*.recipientAddress',
        '*.subject',
        '*.body',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
