"""HTTP schemas of accounts and keys (docs/API.md "Accounts and keys")."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from service.domain import identity

_HANDLE_DOC = {
    "description": f"{identity.HANDLE_RULE}; unique ignoring case (checked by the server: 422 invalid_handle).",
    "example": "ann",
}


# -- in ---------------------------------------------------------------------
class HandleIn(Schema):
    # The rule itself is checked by the server, so that a bad handle gets its
    # own stable code (invalid_handle) rather than a generic validation error.
    handle = fields.String(required=True, validate=validate.Length(max=64), metadata=_HANDLE_DOC)


# -- out --------------------------------------------------------------------
class AccountOut(Schema):
    handle = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(identity.KINDS))


class NewAccountOut(AccountOut):
    key = fields.String(
        required=True,
        metadata={"description": "Shown once. Send it as 'Authorization: Bearer <key>'. Only its sha256 is kept."},
    )


class KeyOut(Schema):
    key = fields.String(required=True, metadata={"description": "The new key, shown once; the old one stops at once."})
