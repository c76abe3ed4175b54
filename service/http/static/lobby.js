/* Quarterdeck pages: the account page, the lobby on the home page, and My games.
 *
 * Every action is a /v1 call with the signed-in account's key (window.QD.auth, static/account.js):
 *   /account   sign up (POST /v1/accounts: the key is shown once), sign in (GET /v1/account),
 *              sign out, a new key (POST /v1/account/key)
 *   /          join a table (POST /v1/tables/{id}/join), open one (POST /v1/tables), play bots
 *              (POST /v1/tables, then POST /v1/tables/{id}/bots for each bot seat)
 *   /me        the page again with the key (?partial=1), accept or decline an invitation, leave a table
 * Whoever sits at a table that is waiting for players lands on its game when the last seat is taken:
 * the page asks for the table (GET /v1/tables/{id}) every few seconds while the tab is shown.
 */
"use strict";

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const auth = () => window.QD.auth;
  const say = (el, text) => { if (el) el.textContent = text; };
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const gamePage = (gid) => location.assign("/games/" + encodeURIComponent(gid));

  /** Run one action of a form or button at a time: no double submit while it is in flight. */
  const busy = new WeakSet();
  const once = async (el, work) => {
    if (busy.has(el)) return;
    busy.add(el);
    const buttons = el.tagName === "FORM" ? $$("button", el) : [el];
    for (const b of buttons) b.disabled = true;
    try { await work(); } finally {
      busy.delete(el);
      for (const b of buttons) b.disabled = false;
    }
  };

  const needSignIn = (out) => {
    if (auth().key()) return false;
    if (out) {
      out.replaceChildren("You need an account: ");
      const a = document.createElement("a");
      a.href = "/account";
      a.textContent = "sign in or sign up";
      out.append(a, ".");
    }
    return true;
  };

  // ---------------------------------------------------------------------------------------------
  // The account page
  const showKey = (key) => {
    const box = $("[data-role=new-key-box]");
    if (!box) return;
    $("[data-role=new-key]", box).textContent = key;
    say($("[data-role=copy-status]", box), "");
    box.hidden = false;
  };

  const accountPage = () => {
    const handle = auth().handle();
    say($("[data-role=handle]"), handle || "");
    say($("[data-role=kept]"), auth().remembered()
      ? "Your key is remembered on this device until you sign out."
      : "Your key is kept in this tab only: closing it signs you out.");
  };

  const signUp = async (form) => {
    const out = $("[data-role=form-status]", form);
    const handle = form.elements.handle.value.trim();
    try {
      say(out, "Signing up…");
      const made = await auth().api("POST", "/v1/accounts", { handle });
      auth().keep(made.key, made.handle, form.elements.remember.checked);
      form.reset();
      say(out, "");
      showKey(made.key);
      accountPage();
    } catch (e) {
      say(out, e.message);
    }
  };

  const signIn = async (form) => {
    const out = $("[data-role=form-status]", form);
    try {
      say(out, "Signing in…");
      await auth().signIn(form.elements.key.value, form.elements.remember.checked);
      form.reset();
      say(out, "");
      const back = new URLSearchParams(location.search).get("next");
      if (back && back.startsWith("/") && !back.startsWith("//")) { location.assign(back); return; }
      accountPage();
    } catch (e) {
      say(out, e.status === 403 ? "That key is not the key of an account (a key that was replaced stops working)." : e.message);
    }
  };

  const rotate = async (button) => {
    if (!confirm("Make a new key? The current key stops working at once, everywhere.")) return;
    try {
      const answer = await auth().api("POST", "/v1/account/key");
      auth().keep(answer.key, auth().handle(), auth().remembered());
      showKey(answer.key);
    } catch (e) {
      say($("[data-role=kept]"), "No new key: " + e.message);
    }
  };

  const copyKey = async () => {
    const box = $("[data-role=new-key-box]");
    const key = $("[data-role=new-key]", box).textContent;
    const out = $("[data-role=copy-status]", box);
    try {
      await navigator.clipboard.writeText(key);
      say(out, "Copied.");
    } catch (e) {
      // No clipboard (an insecure origin, a refusal): select it for the person to copy.
      const range = document.createRange();
      range.selectNodeContents($("[data-role=new-key]", box));
      const sel = getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      say(out, "Selected: copy it with Ctrl+C (⌘C).");
    }
  };

  // ---------------------------------------------------------------------------------------------
  // The lobby's forms
  const gameOption = (form) => form.elements.game.selectedOptions[0];

  /** Seats from the game's minimum to its maximum; a level per bot seat; the neutral ship only
   *  where it exists (Waters of Nereus with two players). */
  const shape = (form) => {
    const opt = gameOption(form);
    if (!opt) return;
    const min = Number(opt.dataset.min), max = Number(opt.dataset.max);
    const seats = form.elements.seats;
    for (const o of seats.options) o.hidden = o.disabled = Number(o.value) < min || Number(o.value) > max;
    if (seats.selectedOptions[0].disabled) seats.value = String(min);
    const n = Number(seats.value);
    const neutral = $("[data-role=neutral]", form);
    if (neutral) {
      const fits = opt.value === "waters-of-nereus" && n === 2;
      neutral.hidden = !fits;
      if (!fits) neutral.querySelector("input").checked = false;
    }
    const levels = $("[data-role=levels]", form);
    if (levels) {
      const rows = $$("[data-bot-seat]", levels);
      const first = rows[0];
      for (let i = rows.length; i < n - 1; i++) {
        const row = first.cloneNode(true);
        row.dataset.botSeat = String(i + 1);
        row.firstChild.textContent = `Bot ${i + 1} level`;
        // Different levels by default: a table seats each house bot once.
        const select = row.querySelector("select");
        select.selectedIndex = Math.min(i, select.options.length - 1);
        levels.append(row);
      }
      for (const row of $$("[data-bot-seat]", levels)) if (Number(row.dataset.botSeat) > n - 1) row.remove();
    }
  };

  const tableBody = (form) => {
    const body = { game: form.elements.game.value, seats: Number(form.elements.seats.value), rated: form.elements.rated.checked };
    const clock = form.elements.clock.value;
    if (clock) body.clock = JSON.parse(clock);
    if (form.elements.neutral && form.elements.neutral.checked) body.options = { neutral: true };
    return body;
  };

  /** Wait for a table to start, then open its game (a table closed or gone ends the wait). */
  const waiting = new Set();
  const awaitTable = async (id, out) => {
    if (waiting.has(id)) return;
    waiting.add(id);
    let pause = 1500;
    while (waiting.has(id)) {
      await sleep(pause);
      if (document.hidden) continue;
      try {
        const t = await auth().api("GET", "/v1/tables/" + encodeURIComponent(id));
        pause = 1500;
        if (t.status === "started" && t.game_id) { gamePage(t.game_id); return; }
        if (t.status !== "open") { say(out, "The table was closed."); waiting.delete(id); return; }
        say(out, `Waiting for players: ${t.players.length} of ${t.seats} seated (${t.players.join(", ")}). ` +
                 "The game opens here when the last seat is taken.");
      } catch (e) {
        if (e.status === 404) { waiting.delete(id); return; }
        pause = Math.min(pause * 2, 15000);
      }
    }
  };

  const openTable = async (form) => {
    const out = $("[data-role=form-status]", form);
    if (needSignIn(out)) return;
    try {
      say(out, "Opening a table…");
      const t = await auth().api("POST", "/v1/tables", tableBody(form));
      say(out, `Table open: waiting for ${t.seats - t.players.length} more player(s). You can also leave it from My games.`);
      awaitTable(t.id, out);
    } catch (e) {
      say(out, "Could not open a table: " + e.message);
    }
  };

  const playBots = async (form) => {
    const out = $("[data-role=form-status]", form);
    if (needSignIn(out)) return;
    const levels = $$("select[name=level]", form).map((s) => Number(s.value));
    let table = null;
    try {
      say(out, "Opening a table…");
      table = await auth().api("POST", "/v1/tables", tableBody(form));
      for (const level of levels) {
        say(out, `Seating the level ${level} bot…`);
        table = await auth().api("POST", `/v1/tables/${table.id}/bots`, { level });
      }
      if (table.game_id) { gamePage(table.game_id); return; }
      say(out, "The table is open, waiting for its last seat.");
      awaitTable(table.id, out);
    } catch (e) {
      say(out, "Could not start: " + e.message);
      // A table left half-seated would wait for ever: leave it.
      if (table && table.status === "open") auth().api("POST", `/v1/tables/${table.id}/leave`).catch(() => {});
    }
  };

  const joinTable = async (button) => {
    const out = $("[data-role=lobby-status]") || $("[data-role=me-status]");
    if (needSignIn(out)) return;
    try {
      say(out, "Joining…");
      const t = await auth().api("POST", `/v1/tables/${button.dataset.id}/join`);
      if (t.game_id) { gamePage(t.game_id); return; }
      button.hidden = true;
      say(out, `Seated: waiting for ${t.seats - t.players.length} more player(s).`);
      awaitTable(t.id, out);
    } catch (e) {
      say(out, "Could not join: " + e.message);
    }
  };

  // ---------------------------------------------------------------------------------------------
  // My games
  const loadMe = async () => {
    const root = $("#me");
    if (!root || !auth().key()) return;
    const out = $("[data-role=me-status]");
    try {
      const resp = await fetch(location.pathname + "?partial=1", { headers: auth().headers(), cache: "no-store", credentials: "omit" });
      if (resp.status === 401 || resp.status === 403) {
        auth().signOut();
        say(out, "Your key no longer works (was a new key made elsewhere?): sign in again.");
        return;
      }
      if (!resp.ok) { say(out, `My games could not be loaded (${resp.status}): try again in a moment.`); return; }
      $("#main").innerHTML = await resp.text();
      for (const row of $$("[data-waiting]")) awaitTable(row.dataset.waiting, $("[data-role=me-status]"));
    } catch (e) {
      say(out, "My games could not be loaded: check the connection.");
    }
  };

  const answerInvitation = async (button, verb) => {
    const out = $("[data-role=me-status]");
    try {
      const answer = await auth().api("POST", `/v1/invitations/${button.dataset.id}/${verb}`);
      if (verb === "accept" && answer.game_id) {
        const game = await auth().api("GET", "/v1/games/" + answer.game_id);
        if (game.status === "active") { gamePage(answer.game_id); return; }
      }
      await loadMe();
      say($("[data-role=me-status]"), verb === "accept"
        ? (answer.game_id ? "Accepted: the game starts when every invited player has accepted." : "Accepted.")
        : "Declined.");
    } catch (e) {
      say(out, e.message);
    }
  };

  const leaveTable = async (button) => {
    try {
      await auth().api("POST", `/v1/tables/${button.dataset.id}/leave`);
      waiting.delete(button.dataset.id);
      await loadMe();
      say($("[data-role=me-status]"), "You left the table.");
    } catch (e) {
      say($("[data-role=me-status]"), e.message);
    }
  };

  // ---------------------------------------------------------------------------------------------
  const forms = {
    "sign-up": signUp,
    "sign-in": signIn,
    "open-table": openTable,
    "play-bot": playBots,
  };
  const buttons = {
    "sign-out": () => { auth().signOut(); $("[data-role=new-key-box]") && ($("[data-role=new-key-box]").hidden = true); },
    "rotate-key": rotate,
    "copy-key": copyKey,
    "join-table": joinTable,
    "accept-invitation": (b) => answerInvitation(b, "accept"),
    "decline-invitation": (b) => answerInvitation(b, "decline"),
    "leave-table": leaveTable,
  };

  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest("form[data-action]");
    const run = form && forms[form.dataset.action];
    if (!run) return;
    ev.preventDefault();
    once(form, () => run(form));
  });

  document.addEventListener("click", (ev) => {
    const button = ev.target.closest("button[data-action]");
    const run = button && buttons[button.dataset.action];
    if (!run) return;
    ev.preventDefault();
    once(button, () => run(button));
  });

  document.addEventListener("change", (ev) => {
    const form = ev.target.closest("form[data-action=open-table], form[data-action=play-bot]");
    if (form && (ev.target.name === "game" || ev.target.name === "seats")) shape(form);
  });

  const start = () => {
    for (const form of $$("form[data-action=open-table], form[data-action=play-bot]")) shape(form);
    if ($("[data-role=new-key-box]")) accountPage();
    if ($("#me") && !$("#me").dataset.handle) loadMe();
    // Already seated at a table of the lobby: the Join button is not for this person.
    const mine = (auth().handle() || "").toLowerCase();
    for (const b of $$("[data-action=join-table]")) {
      if (mine && b.dataset.players.toLowerCase().split(",").includes(mine)) b.hidden = true;
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
