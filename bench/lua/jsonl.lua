-- The URL as @trpc/client's httpBatchStreamLink asks for it: a batch whose
-- answer streams as JSON Lines (trpc-accept: application/jsonl).
wrk.headers["trpc-accept"] = "application/jsonl"
