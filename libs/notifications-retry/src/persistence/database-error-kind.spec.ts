import { isConnectionLost, isPassingDatabaseError } from './database-error-kind';
import { passingErrorDelayMs } from './retry-passing-errors';

const pgError = (code: string, message = 'server said no'): Error =>
  Object.assign(new Error(message), { code });

describe('database error kinds', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'crash shutdown'],
    ['08006', 'connection failure'],
    ['08003', 'connection does not exist'],
    ['ECONNRESET', 'read ECONNRESET'],
    ['EPIPE', 'write EPIPE'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.5:5432'],
    ['ETIMEDOUT', 'connect ETIMEDOUT 10.0.0.5:5432'],
    ['ENOTCONN', 'socket is not connected'],
  ])('%s loses the connection and passes', (code, message) => {
    expect(isConnectionLost(pgError(code, message))).toBe(true);
    expect(isPassingDatabaseError(pgError(code, message))).toBe(true);
  });

  it('a connect that failed on every address of a host name loses the connection', () => {
    const refused = [pgError('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432')];
    expect(isConnectionLost(new AggregateError(refused, ''))).toBe(true);
    expect(isConnectionLost(new AggregateError([pgError('23505')], ''))).toBe(false);
    // One lost address is enough, whatever the others failed with.
    const mixed = [
      pgError('EADDRNOTAVAIL', 'connect EADDRNOTAVAIL ::1:5432'),
      pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
    ];
    expect(isConnectionLost(new AggregateError(mixed, ''))).toBe(true);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'connection is closed',
    'Connection ended',
    'Client has encountered a connection error and is not queryable',
  ])('a socket that ended without a code loses the connection: %s', (message) => {
    expect(isConnectionLost(new Error(message))).toBe(true);
  });

  it('a server error that only quotes those words keeps the connection', () => {
    // pg's own message starts with them; a RAISE text or a constraint's message may hold them.
    const raised = pgError('P0001', 'refused: Connection terminated flag is set for this account');
    expect(isConnectionLost(raised)).toBe(false);
    expect(isPassingDatabaseError(raised)).toBe(false);
  });

  it.each([
    ['55P03', 'lock timeout'],
    ['57014', 'statement timeout'],
    ['40001', 'serialization failure'],
    ['40P01', 'deadlock'],
    ['53300', 'too many connections'],
  ])('%s (%s) passes and keeps the connection', (code) => {
    expect(isPassingDatabaseError(pgError(code))).toBe(true);
    expect(isConnectionLost(pgError(code))).toBe(false);
  });

  it.each([['23505'], ['22P02'], ['P0001'], ['42P01']])('%s does not pass', (code) => {
    expect(isPassingDatabaseError(pgError(code))).toBe(false);
    expect(isConnectionLost(pgError(code))).toBe(false);
  });

  it('an error without a code, or no error at all, does not pass', () => {
    expect(isPassingDatabaseError(new Error('this row cannot be Sent'))).toBe(false);
    expect(isPassingDatabaseError(undefined)).toBe(false);
  });

  it('waits grow from 25 ms to at most 500 ms, within ±20 %', () => {
    expect(passingErrorDelayMs(1, 0.5)).toBe(25);
    expect(passingErrorDelayMs(2, 0.5)).toBe(50);
    expect(passingErrorDelayMs(10, 0.5)).toBe(500);
    expect(passingErrorDelayMs(10, 0)).toBe(400);
    expect(passingErrorDelayMs(10, 1)).toBe(600);
  });
});
