/** One audit row. $1 action, $2 actor, $3 reason, $4 filter (jsonb), $5 rows. */
export const INSERT_OPERATOR_ACTION_SQL = `
  INSERT INTO notification_operator_actions (action, actor, reason, filter, rows)
  VALUES ($1, $2, $3, $4::jsonb, $5)
  RETURNING id, created_at`;
