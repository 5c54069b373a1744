-- One row per channel: the default ChannelCatalog reads this table at the start of every cycle.
INSERT INTO notification_channels
  (key, is_enabled, provider_key, max_attempts,
   backoff_kind, backoff_base_ms, backoff_max_ms, backoff_multiplier,
   timeout_ms, rate_limit_per_sec, max_concurrency)
VALUES
  ('email', true, 'acme-email', 5,
   'Exponential', 60000, 3600000, 2,
   10000, 50, 20);
