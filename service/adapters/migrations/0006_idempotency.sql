-- Idempotency keys belong to the caller: one seat of one game (an account
-- acts through the seat it sits in).  Before, a key was shared by every seat
-- of a game, so a seat could learn whether another seat had used a key
-- (idempotency_key_reused against invalid_intent) and could take a key
-- another seat would use next.  Rows already stored keep their meaning: each
-- was written by exactly one seat.
ALTER TABLE intent_keys DROP CONSTRAINT intent_keys_pkey;
ALTER TABLE intent_keys ADD PRIMARY KEY (game_id, seat, key);
