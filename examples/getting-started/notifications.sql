-- The dispatcher's first attempt failed: from next_attempt_at on, the row is the worker's.
INSERT INTO notifications
  (channel, recipient_address, subject, body, status, attempts, next_attempt_at,
   last_error_code, last_error_message)
VALUES
  ('email', 'ada@example.com', 'Your statement', 'Your March statement is ready.', 'Failed', 1, now(),
   'http_503', 'HTTP 503: upstream unavailable');

-- Held back by quiet hours until scheduled_at (now() here, so the next cycle sends it too).
INSERT INTO notifications (channel, recipient_address, subject, body, status, scheduled_at)
VALUES ('email', 'grace@example.com', 'Good morning', 'Your weekly summary.', 'Pending', now());
