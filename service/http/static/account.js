/* Quarterdeck pages: the signed-in account (loaded on every page, before the others).
 *
 * window.QD.auth keeps a player's account key in the browser and hands it to the pages' scripts:
 *   key()                 the account key, or null
 *   handle()              the account's handle, or null
 *   signIn(key, remember) checks the key (GET /v1/account) and keeps it: in this tab's
 *                         sessionStorage, or in localStorage when remember is true ("remember on this
 *                         device"); resolves to the account, rejects with the API's message
 *   signOut()             forgets the key everywhere
 *   headers()             {Authorization: "Bearer <key>"}, or {} when signed out
 *   api(method, path, body) a /v1 call with the key: resolves to the answer's JSON, rejects with an
 *                         Error whose message is the API's sentence (and .status, .code, .details)
 * window.QD.duration(seconds) writes a clock's time for people ("3 days", "4 min 30 s").
 * The key is only ever sent as the Authorization header of the pages' own requests: never in a URL,
 * a cookie or a log.  The account page (/account) is where a person signs up, in or out.
 */
"use strict";

(() => {
  const KEY = "qd-key";
  const HANDLE = "qd-handle";
  const stores = () => {
    const out = [];
    try { out.push(sessionStorage); } catch (e) { /* storage disabled */ }
    try { out.push(localStorage); } catch (e) { /* storage disabled */ }
    return out;
  };
  const read = (name) => {
    for (const s of stores()) {
      const v = s.getItem(name);
      if (v) return v;
    }
    return null;
  };

  const auth = {
    key: () => read(KEY),
    handle: () => (read(KEY) ? read(HANDLE) : null),
    headers: () => {
      const k = read(KEY);
      return k ? { Authorization: "Bearer " + k } : {};
    },
    signOut() {
      for (const s of stores()) { s.removeItem(KEY); s.removeItem(HANDLE); }
      auth.changed();
    },
    keep(key, handle, remember) {
      for (const s of stores()) { s.removeItem(KEY); s.removeItem(HANDLE); }
      let store = null;
      try { store = remember ? localStorage : sessionStorage; } catch (e) { return; }
      store.setItem(KEY, key);
      store.setItem(HANDLE, handle);
      auth.changed();
    },
    /** Whether the kept key is in localStorage (this device) rather than this tab only. */
    remembered() {
      try { return !!localStorage.getItem(KEY); } catch (e) { return false; }
    },
    async signIn(key, remember) {
      key = String(key || "").trim();
      const resp = await fetch("/v1/account", {
        headers: { Authorization: "Bearer " + key },
        cache: "no-store",
        credentials: "omit",
      });
      const answer = await resp.json().catch(() => ({}));
      if (!resp.ok) throw auth.error(resp, answer);
      auth.keep(key, answer.handle, !!remember);
      return answer;
    },
    error(resp, answer) {
      const e = (answer && answer.error) || {};
      const err = new Error(e.message || `The server answered ${resp.status}.`);
      err.status = resp.status;
      err.code = e.code || null;
      err.details = e.details || null;
      return err;
    },
    async api(method, path, body) {
      const headers = auth.headers();
      if (body !== undefined) headers["Content-Type"] = "application/json";
      let resp;
      try {
        resp = await fetch(path, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          cache: "no-store",
          credentials: "omit",
        });
      } catch (e) {
        throw new Error("The server could not be reached: check the connection and try again.");
      }
      const answer = await resp.json().catch(() => ({}));
      if (!resp.ok) throw auth.error(resp, answer);
      return answer;
    },
    /** Show who is signed in wherever a page marks it ([data-role=account-link], [data-signed]). */
    changed() {
      const handle = auth.handle();
      for (const a of document.querySelectorAll("[data-role=account-link]")) {
        a.textContent = handle ? handle : "Sign in";
      }
      for (const el of document.querySelectorAll("[data-signed]")) {
        el.hidden = (el.dataset.signed === "in") !== !!handle;
      }
      document.documentElement.dataset.signedIn = handle ? "yes" : "no";
    },
  };

  /** A clock's time for people, as the server's "duration" filter writes it: "3 days", "1 day 4 h",
   *  "2 h 5 min", "4 min 30 s", "12 s". */
  const duration = (seconds) => {
    let s = Math.max(0, Math.floor(Number(seconds) || 0));
    const days = Math.floor(s / 86400); s -= days * 86400;
    const hours = Math.floor(s / 3600); s -= hours * 3600;
    const minutes = Math.floor(s / 60); s -= minutes * 60;
    if (days) return `${days} day${days > 1 ? "s" : ""}` + (hours ? ` ${hours} h` : "");
    if (hours) return `${hours} h` + (minutes ? ` ${minutes} min` : "");
    if (minutes) return `${minutes} min` + (s ? ` ${s} s` : "");
    return `${s} s`;
  };

  window.QD = Object.assign(window.QD || {}, { auth, duration });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => auth.changed());
  else auth.changed();
  // Signing in or out in another tab of this device.
  window.addEventListener("storage", (ev) => { if (ev.key === KEY) auth.changed(); });
})();
