/**
 * Leads the late-success statement's text as an SQL comment. It is the one
 * row write of the worker that no lease fences and no claim token matches
 * (record-late-success.sql.ts), so whoever reads writes back must be able to
 * tell it apart: it shows by name in pg_stat_activity and pg_stat_statements,
 * and a trigger sees it in current_query() (the chaos run's audit does).
 */
export const LATE_SUCCESS_STATEMENT_TAG = 'nr:record-late-success';
