/** The row count of an action, once its batches are done. $1 action id, $2 rows. */
export const UPDATE_OPERATOR_ACTION_ROWS_SQL = `
  UPDATE notification_operator_actions SET rows = $2 WHERE id = $1`;
