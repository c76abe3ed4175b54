"""Read models in Redis, folded from the event store by RQ workers."""
