// make bench's load on boardgame.io: `clients` closed loops over `games` two-seat matches,
// each seat a boardgame.io client (its own socket.io connection, boardgame.io's SocketIO
// transport).  A loop plays its matches in turn: the seat to move picks a random legal
// move from its copy of G and waits for the server's state with the move applied.
// Protocol on stdio: it prints "ready" once every match is created, joined, synced and
// has taken a move; it waits for a line on stdin, measures for `seconds`, prints "done"
// when its last move is answered, then one line of JSON with the figures.
'use strict';
const readline = require('node:readline');
const { Client } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { NautilusShaped, legal } = require('./game');

const [server, clientsArg, gamesArg, secondsArg] = process.argv.slice(2);
const CLIENTS = Number(clientsArg);
const GAMES = Number(gamesArg);
const SECONDS = Number(secondsArg);
const API = `${server}/games/${NautilusShaped.name}`;
const TIMEOUT_MS = 30000;
const WARMUP_MS = 1000;

async function post(path, body) {
  const r = await fetch(API + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

/** One seat: a boardgame.io client and the waits on its state. */
class Seat {
  constructor(matchID, playerID, credentials) {
    this.waits = [];
    this.client = Client({
      game: NautilusShaped,
      // WebSocket from the start, as deployments behind a load balancer run it (no long polling).
      multiplayer: SocketIO({ server, socketOpts: { transports: ['websocket'] } }),
      matchID,
      playerID,
      credentials,
      debug: false,
    });
    this.client.subscribe((state) => {
      if (!state) return;
      this.waits = this.waits.filter(([id, resolve]) => (state._stateID >= id ? resolve(state) && false : true));
    });
    this.client.start();
  }

  /** The seat's state once its _stateID has reached `id`. */
  at(id) {
    const now = this.client.getState();
    if (now && now._stateID >= id) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const seat = `${this.client.matchID}/${this.client.playerID}`;
        reject(new Error(`no state ${id} for ${seat} within ${TIMEOUT_MS} ms (connected: ${this.client.transport.isConnected})`));
      }, TIMEOUT_MS);
      this.waits.push([id, (s) => (clearTimeout(timer), resolve(s), true)]);
    });
  }

  stop() {
    this.client.stop();
  }
}

class Match {
  static async create() {
    const { matchID } = await post('/create', { numPlayers: 2 });
    // Both seats join before either connects: a seat's connection rewrites the match's
    // metadata as it read it, and would drop a join made meanwhile (its credentials).
    const credentials = [];
    for (const playerID of ['0', '1']) {
      const { playerCredentials } = await post(`/${matchID}/join`, { playerID, playerName: `bench-${playerID}` });
      credentials.push(playerCredentials);
    }
    const seats = credentials.map((c, i) => new Seat(matchID, String(i), c));
    const m = new Match(matchID, seats);
    await Promise.all(seats.map((s) => s.at(0)));
    return m;
  }

  constructor(matchID, seats) {
    this.matchID = matchID;
    this.seats = seats;
    this.stateID = 0;
  }

  /** One random legal move by the seat to move; resolves when its state shows it applied.
   * Returns false when the match is over. */
  async move() {
    const state = await this.seats[0].at(this.stateID);
    if (state.ctx.gameover) return false;
    const seat = this.seats[Number(state.ctx.currentPlayer)];
    const mine = await seat.at(this.stateID);
    const options = legal(mine.G, Number(mine.ctx.currentPlayer));
    seat.client.moves.act(options[Math.floor(Math.random() * options.length)]);
    const after = await seat.at(mine._stateID + 1);
    this.stateID = after._stateID;
    return true;
  }
}

function percentile(values, p) {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.round((p / 100) * (s.length - 1)))];
}

async function main() {
  const matches = [];
  for (let i = 0; i < GAMES; i++) matches.push(await Match.create());
  // Warm up, as the HTTP load does for a second: connections, statements, the JIT.
  const warm = performance.now() + WARMUP_MS;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, n) => {
      const mine = matches.filter((_, i) => i % CLIENTS === n);
      for (let i = 0; i < mine.length || performance.now() < warm; i++) await mine[i % mine.length].move();
    }),
  );
  console.log('ready');
  const rl = readline.createInterface({ input: process.stdin });
  await new Promise((resolve) => rl.once('line', resolve));
  rl.close();

  let moves = 0;
  let finished = 0;
  const errors = {};
  const latencies = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  const loop = async (n) => {
    const mine = matches.filter((_, i) => i % CLIENTS === n);
    for (let i = 0; performance.now() < deadline; i++) {
      const k = i % mine.length;
      const started = performance.now();
      try {
        if (await mine[k].move()) {
          moves += 1;
          latencies.push(performance.now() - started);
        } else {
          finished += 1; // a match that ended is replaced by a new one, as our games are
          mine[k].seats.forEach((s) => s.stop());
          mine[k] = await Match.create();
        }
      } catch (e) {
        errors[e.message] = (errors[e.message] || 0) + 1;
        break;
      }
    }
    return mine;
  };
  const played = (await Promise.all(Array.from({ length: CLIENTS }, (_, n) => loop(n)))).flat();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  console.log('done');
  const depth = played.map((m) => m.stateID);
  console.log(
    JSON.stringify({
      moves,
      seconds,
      rate: moves / seconds,
      p50_ms: percentile(latencies, 50),
      p99_ms: percentile(latencies, 99),
      errors,
      games_finished: finished,
      client_cpu_s: (cpu.user + cpu.system) / 1e6,
      state_ids_at_end: { min: Math.min(...depth), max: Math.max(...depth) },
      state_ids: Object.fromEntries(played.map((m) => [m.matchID, m.stateID])),
    }),
  );
  for (const m of played) m.seats.forEach((s) => s.stop());
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
