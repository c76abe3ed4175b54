/* Quarterdeck pages: the little script behind them (no framework, no build step).
 *
 * - Tokens: a seat's or the organiser's token is kept in this tab's sessionStorage, per game,
 *   typed into the page's form or passed as #token=... (a fragment never reaches a server).  With a
 *   token, or else the signed-in account's key (window.QD.auth, static/account.js), the page asks
 *   the server for the same URL again with "Authorization: Bearer" and ?partial=1, and swaps in
 *   what the JSON API lets that viewer see.  No cookie is ever set.
 * - Each time the game's board is swapped in, "qd:board" is dispatched on the document: the seat's
 *   actions panel (static/play.js) reads the new board's legal intents then.  window.QD.page holds
 *   what play.js uses from here: fetchAs, refreshBoard(version) and refreshMain().
 * - Live: a running game's board follows the game (see `Live` below).
 * - Replay: first / previous / next / last, the slider, the keyboard, and a seat's perspective; each
 *   position is the server's drawing of GET /v1/games/{id}/state?version=N (time travel).
 * - Tournaments: the page of a tournament still running follows it by a small poll (see `Follow`).
 */
"use strict";

(() => {
  const STORE = "qd.token.";
  const GAME_PATH = /^\/games\/([0-9a-fA-F-]{36})(?:\/|$)/;

  const gameIdOfPage = () => {
    const m = GAME_PATH.exec(location.pathname);
    return m ? m[1].toLowerCase() : null;
  };

  const Tokens = {
    get(gid) {
      try { return gid ? sessionStorage.getItem(STORE + gid) : null; } catch (e) { return null; }
    },
    set(gid, token) {
      try { sessionStorage.setItem(STORE + gid, token); } catch (e) { /* private mode: this page only */ }
    },
    forget(gid) {
      try { sessionStorage.removeItem(STORE + gid); } catch (e) { /* nothing kept */ }
    },
  };

  /** The signed-in account's key (static/account.js keeps it), or null. */
  const accountKey = () => {
    const auth = window.QD && window.QD.auth;
    if (auth && typeof auth.key === "function") return auth.key();
    for (const store of ["sessionStorage", "localStorage"]) {
      try { const k = window[store].getItem("qd-key"); if (k) return k; } catch (e) { /* storage disabled */ }
    }
    return null;
  };

  /** The credential of this page's viewer: the token this tab holds for the page's game, else the account's key. */
  const credential = () => Tokens.get(gameIdOfPage()) || accountKey();

  /** fetch as the page's viewer (a token for this game, or the signed-in account's key). */
  const fetchAs = (url, opts = {}) => {
    const headers = new Headers(opts.headers || {});
    const cred = credential();
    if (cred) headers.set("Authorization", "Bearer " + cred);
    return fetch(url, { ...opts, headers, cache: "no-store", credentials: "omit" });
  };

  const boardChanged = () => document.dispatchEvent(new CustomEvent("qd:board"));

  const withQuery = (path, params) => {
    const url = new URL(path, location.origin);
    for (const [k, v] of Object.entries(params)) {
      if (v === null || v === undefined || v === "") url.searchParams.delete(k);
      else url.searchParams.set(k, String(v));
    }
    return url.pathname + url.search;
  };

  const sleep = (ms, signal) => new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    if (signal) signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });

  const status = (text) => {
    const el = document.getElementById("live-status");
    if (el) el.textContent = text;
  };

  // ---------------------------------------------------------------------------------------------
  // Live: where new versions of a running game come from.
  //
  // GET /v1/games/{id}/stream (docs/API.md, "Streams"): NDJSON, one board line each time the read
  // model changes, pings, and a last {"type": "end"} line.  A stream that ends for any reason but
  // "finished" (idle, max_duration, shutdown, a dropped connection, a refusal such as 429 when this
  // address holds too many streams) is opened again after a short, growing pause.
  const Live = {
    async *lines(resp, signal) {
      const reader = resp.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      try {
        while (!signal.aborted) {
          const { value, done } = await reader.read();
          if (done) break;
          buffered += decoder.decode(value, { stream: true });
          let nl;
          while ((nl = buffered.indexOf("\n")) >= 0) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line) yield JSON.parse(line);
          }
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    },

    async *versions(gid, version, signal) {
      let pause = 500;
      while (!signal.aborted) {
        if (document.hidden) { await sleep(1000, signal); continue; }
        let finished = false;
        try {
          const resp = await fetchAs(`/v1/games/${gid}/stream`, { signal });
          if (resp.ok && resp.body) {
            status("Live.");
            for await (const line of Live.lines(resp, signal)) {
              if (line.type === "end") { finished = line.reason === "finished"; break; }
              if (line.type !== "board" || !(line.version > version)) continue;
              pause = 500;
              version = line.version;
              yield line;
              if (line.status === "finished") return;
            }
          }
        } catch (e) {
          if (signal.aborted) return;
        }
        if (finished) return;
        status("Live: reconnecting…");
        await sleep(pause, signal);
        pause = Math.min(pause * 2, 4000);
      }
    },

    async follow(root, signal) {
      const gid = root.dataset.game;
      let version = Number(root.dataset.version);
      for await (const game of Live.versions(gid, version, signal)) {
        try {
          await Promise.all([refreshBoard(gid, game.version, signal), appendLog(gid, signal)]);
        } catch (e) {
          if (signal.aborted) return;
          // A fetch that failed (the network away for a moment): the next board line tries again.
        }
        version = game.version;
        root.dataset.version = String(version);
        // The header's count moves with the live line (both say the version shown).
        for (const el of document.querySelectorAll("[data-role=event-count]")) el.textContent = `${version} events`;
        status(`Live: ${version} events.` + (game.status === "finished" ? " The game has finished." : ""));
        if (game.status === "finished") {
          await refreshMain();
          return;
        }
      }
    },
  };

  /** The live board at ``version`` or newer; a board older than the one shown is dropped (the
   *  stream and a posted move may both ask for one, and answers can cross).  A move posted asks
   *  for its board at once, and the stream's line for the same version comes while that request
   *  waits for the move's projection: the line's call shares it rather than having the server
   *  draw the same board twice. */
  let boardWanted = null; // the request in flight: { version, signal, done }
  const refreshBoard = (gid, version, signal) => {
    const current = document.getElementById("board-body");
    if (current && Number(current.dataset.version) >= version) return Promise.resolve(true); // already shown
    if (boardWanted && boardWanted.version >= version && !(boardWanted.signal && boardWanted.signal.aborted)) {
      return boardWanted.done;
    }
    const wanted = { version, signal, done: fetchBoard(gid, version, signal) };
    boardWanted = wanted;
    const clear = () => { if (boardWanted === wanted) boardWanted = null; };
    wanted.done.then(clear, clear);
    return wanted.done;
  };

  const fetchBoard = async (gid, version, signal) => {
    const resp = await fetchAs(withQuery(`/games/${gid}/board`, { min_version: version }), { signal });
    if (!resp.ok) return false;
    const html = await resp.text();
    const board = document.getElementById("board");
    if (!board || (signal && signal.aborted)) return false;
    const holder = document.createElement("div");
    holder.innerHTML = html;
    const fresh = holder.querySelector("#board-body");
    const shown = board.querySelector("#board-body");
    if (fresh && shown && Number(fresh.dataset.version) < Number(shown.dataset.version)) return false;
    board.replaceChildren(...holder.childNodes);
    boardChanged();
    return true;
  };

  /** One log request at a time: a call while one runs asks for one more round after it. */
  let logRunning = null;
  let logAgain = false;
  const appendLog = async (gid, signal) => {
    if (logRunning) { logAgain = true; return logRunning; }
    logRunning = (async () => {
      do {
        logAgain = false;
        await appendLogOnce(gid, signal);
      } while (logAgain && !(signal && signal.aborted));
    })();
    try { await logRunning; } finally { logRunning = null; }
  };

  const appendLogOnce = async (gid, signal) => {
    const list = document.getElementById("log");
    if (!list) return;
    const last = Number(list.dataset.last || 0);
    const resp = await fetchAs(withQuery(`/games/${gid}/log`, { after: last }), { signal });
    if (!resp.ok || (signal && signal.aborted)) return;
    const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 8;
    const holder = document.createElement("ol");
    holder.innerHTML = await resp.text();
    let newest = last;
    for (const li of Array.from(holder.children)) {
      const seq = Number(li.dataset.seq);
      if (seq <= newest) continue;
      li.classList.add("fresh");
      list.appendChild(li);
      newest = seq;
    }
    list.dataset.last = String(newest);
    if (atBottom) list.scrollTop = list.scrollHeight;
  };

  // ---------------------------------------------------------------------------------------------
  // Replay
  class Replay {
    constructor(root, section) {
      this.gid = root.dataset.game;
      this.root = root;
      this.section = section;
      this.head = Number(section.dataset.head);
      this.at = Number(section.dataset.at);
      this.seat = section.dataset.seat === "" ? null : Number(section.dataset.seat);
      this.slider = section.querySelector("#replay-slider");
      this.output = section.querySelector("#replay-pos");
      this.caption = section.querySelector("#replay-caption");
      this.seatSelect = section.querySelector("#replay-seat");
      this.cache = new Map();
      this.pending = null;
      this.timer = null;
      this.started = root.dataset.mode === "replay";
      this.bind();
      this.mark();
    }

    bind() {
      this.section.addEventListener("click", (ev) => {
        const a = ev.target.closest("[data-step]");
        if (!a) return;
        ev.preventDefault();
        this.step(a.dataset.step);
      });
      this.slider.addEventListener("input", () => this.go(Number(this.slider.value), 60));
      if (this.seatSelect) {
        this.seatSelect.addEventListener("change", () => {
          this.seat = this.seatSelect.value === "" ? null : Number(this.seatSelect.value);
          this.go(this.at, 0, true);
        });
      }
    }

    step(kind) {
      const to = { first: 1, last: this.head, prev: this.at - 1, next: this.at + 1,
                   back10: this.at - 10, fwd10: this.at + 10 }[kind];
      if (to !== undefined) this.go(to, 0);
    }

    onKey(ev) {
      const keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last",
                     PageUp: "back10", PageDown: "fwd10" };
      const kind = keys[ev.key];
      if (!kind || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      const t = ev.target;
      if (t === this.slider) return; // the slider moves itself and tells us through "input"
      if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
      ev.preventDefault();
      this.step(kind);
    }

    mark() {
      const list = document.getElementById("log");
      if (!list || !this.started) return;
      const old = list.querySelector("li.current");
      if (old) old.classList.remove("current");
      const li = document.getElementById("e" + this.at);
      if (li) {
        li.classList.add("current");
        const top = li.offsetTop - list.offsetTop;
        if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - li.offsetHeight) {
          list.scrollTop = Math.max(0, top - list.clientHeight / 2);
        }
      }
    }

    go(n, delay = 0, force = false) {
      n = Math.max(1, Math.min(this.head, Math.round(n)));
      if (n === this.at && !force && this.started) return;
      this.started = true;
      this.at = n;
      this.root.dataset.mode = "replay";
      this.section.dataset.at = String(n);
      this.slider.value = String(n);
      this.slider.setAttribute("aria-valuetext", `after event ${n} of ${this.head}`);
      this.output.textContent = `${n} / ${this.head}`;
      const li = document.getElementById("e" + n);
      this.caption.textContent = `After event ${n}: ` + (li ? li.textContent : "…");
      this.mark();
      history.replaceState(null, "", withQuery(location.pathname, { at: n, seat: this.seat }) + location.hash);
      if (Replay.live) { Replay.live.abort(); Replay.live = null; status(""); }
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.load(n, this.seat), delay);
    }

    async load(n, seat) {
      const key = `${n}|${seat === null ? "" : seat}`;
      let html = this.cache.get(key);
      if (html === undefined) {
        if (this.pending) this.pending.abort();
        const ctl = new AbortController();
        this.pending = ctl;
        try {
          const resp = await fetchAs(withQuery(`/games/${this.gid}/board`, { at: n, seat }), { signal: ctl.signal });
          html = await resp.text();
          if (!resp.ok) { this.caption.textContent = "This position cannot be shown."; }
        } catch (e) {
          return; // superseded by a newer step
        }
        if (this.cache.size > 300) this.cache.delete(this.cache.keys().next().value);
        this.cache.set(key, html);
      }
      if (n !== this.at || seat !== this.seat) return; // a newer step won
      const board = document.getElementById("board");
      if (board) board.innerHTML = html;
      const body = document.getElementById("board-body");
      if (body && body.dataset.caption !== undefined) this.caption.textContent = `After event ${n}: ${body.dataset.caption}`;
      if (!document.getElementById("e" + n)) await this.logAround(n);
    }

    /** The log shows a window of events: move it to the position when the replay leaves it. */
    async logAround(n) {
      const list = document.getElementById("log");
      if (!list) return;
      const resp = await fetchAs(withQuery(`/games/${this.gid}/log`, { after: Math.max(0, n - 100), limit: 200 }));
      if (!resp.ok) return;
      const holder = document.createElement("ol");
      holder.innerHTML = await resp.text();
      const got = holder.querySelectorAll("li[data-seq]");
      if (!got.length) return;
      const first = Number(got[0].dataset.seq), last = Number(got[got.length - 1].dataset.seq);
      // Steps may have gone on meanwhile: use the window if it still holds the position.
      if (this.at < first || this.at > last || document.getElementById("e" + this.at)) return;
      list.replaceChildren(...holder.children);
      const items = list.querySelectorAll("li[data-seq]");
      if (items.length) list.dataset.last = items[items.length - 1].dataset.seq;
      const note = document.getElementById("log-range");
      if (note && items.length) note.textContent = `Events ${items[0].dataset.seq} to ${list.dataset.last}.`;
      this.mark();
    }
  }
  Replay.live = null;
  let replay = null;

  // ---------------------------------------------------------------------------------------------
  // Tournaments: the page of a tournament that has not finished follows it by asking for its
  // summary (GET /v1/tournaments/{id}, one small read of the read model) every few seconds while
  // the tab is shown; when its version moves, the page's main block is fetched again (?partial=1)
  // and swapped in.  One request at a time, slower after a failure, none while the tab is hidden;
  // it stops when the tournament finishes, and two hours after the page was opened (a reload
  // brings it up to date).
  const Follow = {
    EVERY: 5000,
    MAX_PAUSE: 60000,
    FOR: 2 * 3600 * 1000,
    openedAt: Date.now(),
    ctl: null,

    async run(root, signal) {
      const tid = root.dataset.tournament;
      const version = Number(root.dataset.version);
      let pause = Follow.EVERY;
      while (!signal.aborted) {
        await sleep(pause, signal);
        if (signal.aborted) return;
        if (Date.now() - Follow.openedAt > Follow.FOR) { status("Reload the page for newer results."); return; }
        if (document.hidden) continue;
        try {
          const resp = await fetch(`/v1/tournaments/${tid}`, { signal, cache: "no-store", credentials: "omit" });
          if (!resp.ok) throw new Error(`status ${resp.status}`);
          const t = await resp.json();
          pause = Follow.EVERY;
          if (t.version !== version && await Follow.swap(signal)) return; // the new page follows on
        } catch (e) {
          if (signal.aborted) return;
          pause = Math.min(pause * 2, Follow.MAX_PAUSE);
        }
      }
    },

    /** The page again, as it is now; the rounds the reader opened stay open. */
    async swap(signal) {
      const resp = await fetch(withQuery(location.pathname + location.search, { partial: 1 }),
                               { signal, cache: "no-store", credentials: "omit" });
      if (!resp.ok || signal.aborted) return false;
      const html = await resp.text();
      const open = new Set(Array.from(document.querySelectorAll("details.round")).map((d) => d.id + ":" + d.open));
      const main = document.getElementById("main");
      main.innerHTML = html;
      for (const d of document.querySelectorAll("details.round")) {
        if (open.has(d.id + ":true")) d.open = true;
        else if (open.has(d.id + ":false")) d.open = false;
      }
      initMain();
      status("Updated at " + new Date().toLocaleTimeString() + ".");
      return true;
    },
  };

  // ---------------------------------------------------------------------------------------------
  // Pages
  const refreshMain = async () => {
    const main = document.getElementById("main");
    const resp = await fetchAs(withQuery(location.pathname + location.search, { partial: 1 }));
    main.innerHTML = await resp.text();
    initMain();
    boardChanged();
  };

  const tokenBanner = (gid) => {
    const main = document.getElementById("main");
    if (!Tokens.get(gid) || document.getElementById("token-banner")) return;
    const p = document.createElement("p");
    p.id = "token-banner";
    p.className = "muted";
    p.append("This tab holds a token for this game. ");
    const b = document.createElement("button");
    b.type = "button";
    b.className = "link";
    b.dataset.action = "forget-token";
    b.textContent = "Forget the token";
    p.append(b);
    main.prepend(p);
  };

  const download = async (button) => {
    const resp = await fetchAs(button.dataset.download);
    if (!resp.ok) { button.textContent = "The export is not available to this viewer."; return; }
    const blob = await resp.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = button.dataset.filename || "export.json";
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  };

  const initMain = () => {
    const gid = gameIdOfPage();
    if (gid) tokenBanner(gid);
    if (Replay.live) { Replay.live.abort(); Replay.live = null; }
    replay = null;
    if (Follow.ctl) { Follow.ctl.abort(); Follow.ctl = null; }
    const tournament = document.getElementById("tournament");
    if (tournament && tournament.dataset.status !== "finished") {
      Follow.ctl = new AbortController();
      Follow.run(tournament, Follow.ctl.signal).catch((e) => console.warn("tournament updates stopped", e));
    }
    const root = document.getElementById("game");
    if (!root) return;
    const section = document.getElementById("replay");
    if (section) replay = new Replay(root, section);
    if (root.dataset.mode === "live" && root.dataset.status !== "finished") {
      Replay.live = new AbortController();
      Live.follow(root, Replay.live.signal).catch((e) => console.warn("live updates stopped", e));
    }
  };

  document.addEventListener("keydown", (ev) => { if (replay) replay.onKey(ev); });

  document.addEventListener("submit", (ev) => {
    const form = ev.target.closest("form[data-action=use-token]");
    if (!form) return;
    ev.preventDefault();
    const token = form.querySelector("input[name=token]").value.trim();
    const gid = gameIdOfPage();
    if (!token || !gid) return;
    Tokens.set(gid, token);
    refreshMain();
  });

  document.addEventListener("click", (ev) => {
    const forget = ev.target.closest("[data-action=forget-token]");
    if (forget) {
      Tokens.forget(gameIdOfPage());
      location.replace(location.pathname + location.search);
      return;
    }
    const dl = ev.target.closest("button[data-download]");
    if (dl) download(dl);
  });

  /** A token passed as #token=...: kept in this tab, and taken out of the address bar. */
  const tokenFromAddress = () => {
    const gid = gameIdOfPage();
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (!gid || !m) return false;
    let token = m[1];
    try { token = decodeURIComponent(token); } catch (e) { /* not %-encoded: use it as it is */ }
    Tokens.set(gid, token);
    history.replaceState(null, "", location.pathname + location.search);
    return true;
  };

  const start = () => {
    document.documentElement.classList.add("js");
    tokenFromAddress();
    const gid = gameIdOfPage();
    if (gid && credential()) refreshMain();
    else { initMain(); boardChanged(); }
  };

  window.QD = window.QD || {};
  window.QD.page = {
    fetchAs,
    credential,
    refreshBoard: (version) => refreshBoard(gameIdOfPage(), version, null),
    refreshMain,
  };

  // The same page opened again with a new #token=... does not reload: take the token now.
  window.addEventListener("hashchange", () => { if (tokenFromAddress()) refreshMain(); });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
