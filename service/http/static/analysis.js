// A finished game's analysis on its page ([data-role=analysis], templates/_analysis.html): asked for
// with the button (a new analysis counts in the caller's day), polled while the worker computes it
// (202 + Retry-After), then drawn: a line of each seat's value after every event, the mistakes with
// the move the level-3 bot preferred, and each seat's agreement with the bot.
"use strict";
(() => {
  const root = document.querySelector("[data-role=analysis]");
  if (!root) return;
  const gid = root.dataset.game;
  const players = JSON.parse(root.dataset.players || "[]");
  const status = root.querySelector("[data-analysis-status]");
  const button = root.querySelector("[data-action=analyse]");
  const body = root.querySelector("[data-analysis-body]");
  const SVG = "http://www.w3.org/2000/svg";
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
  const name = (seat) => players[seat] || `seat ${seat}`;
  const say = (text) => { status.textContent = text; };

  function item(parent, tag, text) {
    const el = document.createElement(tag);
    el.textContent = text;
    parent.appendChild(el);
    return el;
  }

  function chart(events, seats) {
    const svg = root.querySelector("[data-analysis-chart]");
    const values = events.flatMap((e) => e.values);
    const top = Math.max(1, ...values), bottom = Math.min(-1, ...values);
    const x = (i) => (events.length > 1 ? (i / (events.length - 1)) * 600 : 0);
    const y = (v) => 195 - ((v - bottom) / (top - bottom)) * 190;
    const zero = document.createElementNS(SVG, "line");
    zero.setAttribute("x1", "0"); zero.setAttribute("x2", "600");
    zero.setAttribute("y1", String(y(0))); zero.setAttribute("y2", String(y(0)));
    zero.setAttribute("stroke", "#999"); zero.setAttribute("stroke-dasharray", "4 4");
    svg.appendChild(zero);
    const legend = root.querySelector("[data-analysis-legend]");
    for (let s = 0; s < seats; s++) {
      const line = document.createElementNS(SVG, "polyline");
      line.setAttribute("points", events.map((e, i) => `${x(i).toFixed(1)},${y(e.values[s]).toFixed(1)}`).join(" "));
      line.setAttribute("fill", "none");
      line.setAttribute("stroke", COLOURS[s % COLOURS.length]);
      line.setAttribute("stroke-width", "2");
      line.setAttribute("vector-effect", "non-scaling-stroke");
      line.dataset.seat = String(s);
      svg.appendChild(line);
      const key = item(legend, "span", `${name(s)}: ends at ${events[events.length - 1].values[s].toFixed(1)}`);
      key.className = `analysis-key analysis-seat-${s}`;
      if (s < seats - 1) legend.appendChild(document.createTextNode(" · "));
    }
  }

  function show(a) {
    const seats = a.agreement.length;
    chart(a.events, seats);
    const mistakes = root.querySelector("[data-analysis-mistakes]");
    if (!a.mistakes.length) item(mistakes, "li", "No move lost a point or more against the bot's choice.");
    for (const m of a.mistakes) {
      const li = item(mistakes, "li",
        `Event ${m.seq}: ${name(m.seat)} lost ${m.loss.toFixed(1)} points; the bot preferred ${m.preferred_text}.`);
      li.dataset.seq = String(m.seq);
      li.dataset.seat = String(m.seat);
    }
    const agreement = root.querySelector("[data-analysis-agreement]");
    for (const g of a.agreement) {
      item(agreement, "li", `${name(g.seat)}: ${g.matched} of ${g.decisions} decisions were the bot's first choice.`);
    }
    body.hidden = false;
    button.hidden = true;
    say(`Computed with ${a.budget.search_cpu_ms} ms of search per decision.`);
  }

  async function ask() {
    button.disabled = true;
    for (;;) {
      let resp;
      try {
        resp = await fetch(`/v1/games/${gid}/analysis`, { cache: "no-store", credentials: "omit" });
      } catch (err) {
        say("The server could not be reached; try again.");
        button.disabled = false;
        return;
      }
      if (resp.status === 200) { show(await resp.json()); return; }
      const wait = Math.max(1, Number(resp.headers.get("Retry-After")) || 5);
      if (resp.status === 202) {
        say(`Being computed; looking again in ${wait} s.`);
        await new Promise((done) => setTimeout(done, wait * 1000));
        continue;
      }
      const answer = await resp.json().catch(() => ({}));
      say((answer.error && answer.error.message) || `The analysis is not available (${resp.status}).`);
      button.disabled = false;
      return;
    }
  }

  button.addEventListener("click", ask);
})();
