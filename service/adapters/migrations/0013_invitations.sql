-- Invitations (docs/API.md "Consent"): nobody is seated in an organiser's game of
-- accounts or registered in a tournament without an action of their own key.
--
-- An organiser's "accounts": true game waits here (pending_games, "status":
-- "invited") until every invited account accepts; the accept that completes it
-- creates the game, under the id given out at the invitation, in the same
-- transaction.  A tournament registration by handles is one invitation per
-- account; accepting it registers the account (a registration by its own key).
-- Invitations expire (expires_at; QD_INVITATION_TTL_S): an expired one can no
-- longer be accepted and is listed nowhere.
CREATE TABLE pending_games (
    game_id     uuid PRIMARY KEY,
    game        text NOT NULL,
    players     text[] NOT NULL,
    options     jsonb NOT NULL,
    rated       boolean NOT NULL,
    clock       jsonb,
    created_by  text,
    invited_by  text NOT NULL,
    status      text NOT NULL CHECK (status IN ('invited', 'started', 'declined')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);

CREATE TABLE invitations (
    invitation_id uuid PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('game', 'tournament')),
    -- The pending game's id, or the tournament's.
    target_id     uuid NOT NULL,
    account_id    uuid NOT NULL REFERENCES accounts (account_id),
    handle        text NOT NULL,
    invited_by    text NOT NULL,
    status        text NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'cancelled')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    answered_at   timestamptz
);
CREATE INDEX invitations_account ON invitations (account_id, status, expires_at);
CREATE INDEX invitations_target ON invitations (target_id);
CREATE INDEX invitations_inviter ON invitations (invited_by, status, expires_at);
