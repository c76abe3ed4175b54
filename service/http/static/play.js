/* Quarterdeck game page: playing the viewer's seat (no framework, no build step).
 *
 * The board fragment the server draws for a seat (templates/_board.html) carries #play-data: the
 * version, whether the seat is to act, its clock's deadline, and its legal intents from
 * GET /v1/games/{id}/legal, each described in words (service/http/pages_text: group, text, the
 * steps of a long list, the board elements it names).  From it this script draws the actions
 * panel (#actions) and makes the named board elements playable; static/qd.js swaps in each new
 * board (the seat's stream, or a move just posted) and says so with "qd:board".
 *
 * - The panel is always complete: every legal intent, grouped by kind.  A group longer than a few
 *   moves is chosen in steps (button[data-choice]: the tile, then the colour); the last step is a
 *   button[data-intent] holding the intent's JSON exactly as /legal gave it.
 * - A playable board element (class "playable", focusable, named) narrows the panel to the intents
 *   naming it, and posts when exactly one does.
 * - Posting: POST /v1/games/{id}/intents with a new Idempotency-Key per click and expected_version =
 *   the board's version; nothing else is posted while one is in flight; a 409 brings the board up to
 *   date and keeps the pending choice while it is still legal; every refusal's message is shown in
 *   #play-status (a live region).
 * - The seat's clock counts down, the tab's title says when it is the seat's turn, and Resign asks
 *   for a confirmation first.
 */
"use strict";

(() => {
  /** A group with at most this many moves (left after the steps taken) lists them all. */
  const SHORT = 6;
  const TITLE_MARK = "● Your turn · ";

  const state = {
    data: null, // the parsed #play-data of the board shown
    choice: { group: null, path: [], target: null }, // the person's pending choice
    inflight: false,
    refocus: false, // move the focus into the panel after it is drawn again
  };

  const page = () => (window.QD && window.QD.page) || null;
  const gameId = () => {
    const root = document.getElementById("game");
    return root ? root.dataset.game : null;
  };

  const say = (text) => {
    const el = document.getElementById("play-status");
    if (el) el.textContent = text;
  };

  const newKey = () => {
    if (window.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  };

  const read = () => {
    const el = document.getElementById("play-data");
    if (!el) return null;
    let intents = [];
    try { intents = JSON.parse(el.dataset.intents || "[]"); } catch (e) { intents = []; }
    return {
      seat: Number(el.dataset.seat),
      version: Number(el.dataset.version),
      status: el.dataset.status,
      yourTurn: el.dataset.yourTurn === "true",
      intents,
    };
  };

  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

  // ---------------------------------------------------------------------------------------------
  // What the panel shows: the intents left after the pending choice.
  const narrowed = () => {
    const { data, choice } = state;
    if (!data) return [];
    let list = data.intents;
    if (choice.target) list = list.filter((d) => (d.targets || []).includes(choice.target));
    if (choice.group !== null) {
      list = list.filter((d) => d.group === choice.group && choice.path.every((p, i) => (d.steps[i] || "") === p));
    }
    return list;
  };

  const button = (label, attrs, cls) => {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    if (cls) b.className = cls;
    for (const [k, v] of Object.entries(attrs)) b.setAttribute(k, v);
    if (state.inflight) b.disabled = true;
    return b;
  };

  /** The moves of one group at the pending depth: choices while the list is long, else the moves. */
  const drawGroup = (group, items, depth) => {
    const box = document.createElement("fieldset");
    box.className = "move-group";
    const legend = document.createElement("legend");
    legend.textContent = group;
    box.append(legend);
    const path = state.choice.group === group ? state.choice.path.slice() : [];
    let rest = items;
    // Steps every remaining move shares are taken at once (nothing to choose there).
    while (rest.length > SHORT && depth < Math.max(...rest.map((d) => d.steps.length))) {
      const values = [...new Set(rest.map((d) => d.steps[depth] || ""))];
      if (values.length > 1) break;
      path.push(values[0]);
      depth += 1;
    }
    if (path.length) {
      const crumbs = document.createElement("p");
      crumbs.className = "crumbs";
      crumbs.textContent = path.filter(Boolean).join(" › ");
      box.append(crumbs);
    }
    const list = document.createElement("div");
    list.className = "moves";
    const stepsLeft = rest.some((d) => (d.steps[depth] || "") !== "");
    if (rest.length > SHORT && stepsLeft) {
      const counts = new Map();
      for (const d of rest) {
        const v = d.steps[depth] || "";
        if (v === "") continue;
        counts.set(v, (counts.get(v) || 0) + 1);
      }
      for (const [v, n] of counts) {
        if (n === 1) { // one move behind this step: the move itself
          list.append(intentButton(rest.find((d) => (d.steps[depth] || "") === v)));
          continue;
        }
        const b = button(`${v} (${n})`, { "data-choice": v, "data-group": group, "data-path": JSON.stringify(path) });
        b.setAttribute("aria-label", `${group}: ${v}, ${n} ${n === 1 ? "move" : "moves"}`);
        list.append(b);
      }
      // Moves with nothing to choose at this step are listed as they are.
      for (const d of rest) if ((d.steps[depth] || "") === "") list.append(intentButton(d));
    } else {
      for (const d of rest) list.append(intentButton(d));
    }
    box.append(list);
    return box;
  };

  const intentButton = (d) => {
    const b = button(d.text, { "data-intent": JSON.stringify(d.intent) });
    return b;
  };

  const draw = () => {
    const body = document.getElementById("actions-body");
    const active = document.activeElement;
    // Where the person was: in the panel (its moves, or the panel itself once it emptied).
    const hadFocus = !!body && (body.contains(active) || state.refocus);
    const before = body && active && body.contains(active)
      ? (active.getAttribute("data-intent") || active.getAttribute("data-choice"))
      : null;
    drawPanel();
    markBoard();
    if (body && hadFocus) placeFocus(body, before);
  };

  /** The focus back in the panel: the same move if it is still there, else the first one, else
   *  the panel itself (kept pending while a post in flight disables the buttons). */
  const placeFocus = (body, before) => {
    const buttons = Array.from(body.querySelectorAll("button"));
    const again = before && buttons.find(
      (b) => b.getAttribute("data-intent") === before || b.getAttribute("data-choice") === before);
    const first = again || body.querySelector("button[data-choice], button[data-intent]") || buttons[0];
    if (state.inflight) { state.refocus = true; return; }
    state.refocus = false;
    if (first) { first.focus(); return; }
    body.setAttribute("tabindex", "-1");
    body.focus();
  };

  const drawPanel = () => {
    const body = document.getElementById("actions-body");
    if (!body) return;
    const { data, choice } = state;
    body.replaceChildren();
    const section = document.getElementById("actions");
    if (section) section.setAttribute("aria-busy", state.inflight ? "true" : "false");
    if (!data) return;
    if (data.status !== "active") {
      const p = document.createElement("p");
      p.textContent = "The game has finished.";
      body.append(p);
      return;
    }
    if (!data.yourTurn || !data.intents.length) {
      const p = document.createElement("p");
      p.className = "muted";
      p.textContent = data.yourTurn ? "Nothing to choose at this moment." : "Nothing to do until it is your turn.";
      body.append(p);
      return;
    }
    let list = narrowed();
    if (!list.length && (choice.group !== null || choice.target)) {
      // The pending choice is no longer legal (the board moved on): start again.
      state.choice = { group: null, path: [], target: null };
      list = narrowed();
    }
    if (choice.group !== null || choice.target) {
      const bar = document.createElement("p");
      bar.className = "choice-bar";
      if (choice.target) {
        const el = document.querySelector(`#board [data-target="${CSS.escape(choice.target)}"]`);
        bar.append(`Moves with ${el ? el.dataset.label : "the chosen piece"}. `);
      }
      if (choice.group !== null && choice.path.length) bar.append(button("‹ Back", { "data-action": "choice-back" }, "link"));
      bar.append(" ", button("All moves", { "data-action": "choice-clear" }, "link"));
      body.append(bar);
    }
    const groups = new Map();
    for (const d of list) {
      if (!groups.has(d.group)) groups.set(d.group, []);
      groups.get(d.group).push(d);
    }
    for (const [group, items] of groups) {
      const depth = choice.group === group ? choice.path.length : 0;
      body.append(drawGroup(group, items, depth));
    }
  };

  // ---------------------------------------------------------------------------------------------
  // The board: elements the legal intents name are playable.
  const markBoard = () => {
    const board = document.getElementById("board");
    if (!board) return;
    const counts = new Map();
    const { data } = state;
    const live = data && data.status === "active" && data.yourTurn && !state.inflight;
    if (live) {
      for (const d of state.choice.group !== null ? narrowed() : data.intents) {
        for (const t of d.targets || []) counts.set(t, (counts.get(t) || 0) + 1);
      }
    }
    for (const el of board.querySelectorAll("[data-target]")) {
      const n = counts.get(el.dataset.target) || 0;
      if (n) {
        el.classList.add("playable");
        el.classList.toggle("picked", state.choice.target === el.dataset.target);
        el.setAttribute("tabindex", "0");
        el.setAttribute("role", "button");
        el.setAttribute("aria-label", `${el.dataset.label}: ${n === 1 ? "1 move" : n + " moves"}`);
      } else {
        el.classList.remove("playable", "picked");
        el.removeAttribute("tabindex");
        el.removeAttribute("role");
        el.removeAttribute("aria-label");
      }
    }
    // A drawing with playable pieces is a group of controls, not a picture.
    for (const svg of board.querySelectorAll("svg.drawing")) {
      svg.setAttribute("role", svg.querySelector(".playable") ? "group" : "img");
    }
  };

  const pickTarget = (el) => {
    if (state.inflight) return;
    const target = el.dataset.target;
    const naming = state.data.intents.filter((d) => (d.targets || []).includes(target));
    if (naming.length === 1) {
      post(naming[0].intent, naming[0].text);
      return;
    }
    state.choice = { group: null, path: [], target };
    state.refocus = true;
    draw();
  };

  // ---------------------------------------------------------------------------------------------
  // Posting like a good client.
  const post = async (intent, text, opts = {}) => {
    const gid = gameId();
    const p = page();
    if (state.inflight || !gid || !p || !state.data) return;
    state.inflight = true;
    state.refocus = true;
    draw();
    say(`Sending: ${text}…`);
    const body = { intent };
    if (!opts.anyVersion) body.expected_version = state.data.version;
    let resp = null;
    let answer = {};
    try {
      resp = await p.fetchAs(`/v1/games/${gid}/intents`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Idempotency-Key": newKey() },
        body: JSON.stringify(body),
      });
      answer = await resp.json().catch(() => ({}));
    } catch (e) {
      state.inflight = false;
      say("The server could not be reached: the move was not sent. Try again.");
      draw();
      return;
    }
    const error = (answer && answer.error) || {};
    if (resp.status === 201) {
      state.choice = { group: null, path: [], target: null };
      say(`Done: ${text}.`);
      state.inflight = false;
      // The log is the stream's to bring (its line for this version asks for it): asking here
      // too made the server read and draw each move's log entries twice.
      await p.refreshBoard(answer.version).catch(() => false);
    } else if (resp.status === 409) {
      const current = (error.details && error.details.current_version) || state.data.version + 1;
      say(`${error.message || "Someone moved first."} The board is up to date again.`);
      state.inflight = false;
      await p.refreshBoard(current).catch(() => false);
    } else {
      say(error.message || `The server refused the move (${resp.status}).`);
      state.inflight = false;
    }
    if (opts.after) await opts.after(resp.status).catch(() => {});
    draw();
  };

  // ---------------------------------------------------------------------------------------------
  // Whose turn: the tab's title, and the seat's clock counting down.
  const baseTitle = () => document.title.replace(TITLE_MARK, "");
  const markTitle = () => {
    const yours = !!(state.data && state.data.status === "active" && state.data.yourTurn);
    const plain = baseTitle();
    document.title = yours ? TITLE_MARK + plain : plain;
  };

  const words = (seconds) => {
    if (window.QD && typeof window.QD.duration === "function") return window.QD.duration(seconds);
    const s = Math.max(0, Math.floor(seconds));
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    if (d) return `${d} day${d > 1 ? "s" : ""}` + (h ? ` ${h} h` : "");
    if (h) return `${h} h` + (m ? ` ${m} min` : "");
    if (m) return `${m} min` + (s % 60 ? ` ${s % 60} s` : "");
    return `${s} s`;
  };

  /** The seat's time left: counting down to its deadline while it runs, else the time it holds. */
  const tick = () => {
    for (const el of document.querySelectorAll("[data-role=my-clock]")) {
      const due = Date.parse(el.dataset.deadline || "");
      const held = el.dataset.remaining === "" ? NaN : Number(el.dataset.remaining);
      const left = Number.isNaN(due) ? held : (due - Date.now()) / 1000;
      const out = el.querySelector("[data-role=time-left]");
      if (out && !Number.isNaN(left)) out.textContent = left > 0 ? words(left) : "no time";
    }
  };

  // ---------------------------------------------------------------------------------------------
  const onBoard = () => {
    state.data = read();
    markTitle();
    tick();
    draw();
  };

  document.addEventListener("qd:board", onBoard);

  document.addEventListener("click", (ev) => {
    const t = ev.target;
    if (!(t instanceof Element)) return;
    const actions = t.closest("#actions");
    if (actions) {
      const intentBtn = t.closest("button[data-intent]");
      if (intentBtn) {
        if (state.inflight) return;
        post(JSON.parse(intentBtn.getAttribute("data-intent")), intentBtn.textContent);
        return;
      }
      const choiceBtn = t.closest("button[data-choice]");
      if (choiceBtn) {
        if (state.inflight) return;
        state.choice = {
          group: choiceBtn.dataset.group,
          path: [...JSON.parse(choiceBtn.dataset.path || "[]"), choiceBtn.dataset.choice],
          target: state.choice.target,
        };
        state.refocus = true;
        draw();
        return;
      }
      const act = t.closest("button[data-action]");
      if (!act) return;
      const name = act.dataset.action;
      if (name === "choice-back") {
        state.choice = { ...state.choice, path: state.choice.path.slice(0, -1) };
        if (!state.choice.path.length) state.choice.group = null;
        state.refocus = true;
        draw();
      } else if (name === "choice-clear") {
        state.choice = { group: null, path: [], target: null };
        state.refocus = true;
        draw();
      } else if (name === "resign") {
        const confirm = actions.querySelector("[data-role=resign-confirm]");
        confirm.hidden = false;
        act.hidden = true;
        confirm.querySelector("[data-action=confirm-resign]").focus();
      } else if (name === "cancel-resign") {
        const box = actions.querySelector("[data-role=resign-box]");
        box.querySelector("[data-role=resign-confirm]").hidden = true;
        const again = box.querySelector("[data-action=resign]");
        again.hidden = false;
        again.focus();
      } else if (name === "confirm-resign") {
        post({ type: "resign" }, "resign", {
          anyVersion: true,
          after: async (status) => { if (status === 201) await page().refreshMain(); },
        });
      }
      return;
    }
    const piece = t.closest("#board .playable[data-target]");
    if (piece) {
      ev.preventDefault();
      pickTarget(piece);
    }
  });

  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (!(t instanceof Element) || !t.matches("#board .playable[data-target]")) return;
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      pickTarget(t);
    }
  });

  setInterval(tick, 1000);
  // qd.js (loaded first) may have drawn the board before this script ran.
  if (document.getElementById("play-data")) onBoard();
})();
