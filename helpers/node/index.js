// What a Node.js program under `mcsim test` may tell mcsim, beside its memcached commands:
//
//     const mcsim = require("mcsim-control");
//     await mcsim.runParticipants(mcsim.clients(), async (i) => {
//       const me = await mcsim.participant(`t${i}`);
//       const mc = memjs.Client.create(mcsim.servers().join(","), { timeout: 30, retries: 0 });
//       await mc.get(me.nameKey);      // takes this client's connection into the schedule
//       await me.enter("section");     // mcsim fails the run if another is inside
//       await me.sleep(0.5);           // half a second of the servers' virtual time
//       await me.leave("section");
//       mc.close(); await me.close();
//     });
//
// Each participant talks to mcsim on a connection of its own, one line at a time, and
// mcsim answers at once, so what it is told keeps the participant's own order. Outside
// `mcsim test` (no MCSIM_EXECUTION: the same program against a real memcached at
// MCSIM_SERVERS, 127.0.0.1:11211 by default) it says nothing and sleeps in real time.
"use strict";

const net = require("net");

/** True under `mcsim test`. */
function under() {
  return process.env.MCSIM_EXECUTION !== undefined;
}

/** The servers of this run (MCSIM_SERVERS), the first first, as "host:port". */
function servers() {
  return (process.env.MCSIM_SERVERS || "127.0.0.1:11211").split(",");
}

/** How many participants the run waits for (MCSIM_CLIENTS). */
function clients() {
  const n = parseInt(process.env.MCSIM_CLIENTS || "1", 10);
  return n >= 1 ? n : 1;
}

/** A connection to mcsim for control lines, answered one at a time. */
class Line {
  static open() {
    const [host, port] = splitAddress(servers()[0]);
    return new Promise((resolve, reject) => {
      const socket = net.createConnection({ host, port }, () => resolve(new Line(socket)));
      socket.once("error", reject);
    });
  }

  constructor(socket) {
    this.socket = socket;
    this.socket.setNoDelay(true);
    this.buffered = "";
    this.waiting = [];
    this.socket.on("data", (data) => {
      this.buffered += data.toString();
      let end;
      while ((end = this.buffered.indexOf("\r\n")) >= 0) {
        const reply = this.buffered.slice(0, end);
        this.buffered = this.buffered.slice(end + 2);
        const next = this.waiting.shift();
        if (next) next.resolve(reply);
      }
    });
    const closed = () => {
      for (const next of this.waiting.splice(0)) next.reject(new Error("the connection closed"));
    };
    this.socket.on("close", closed);
    this.socket.on("error", closed);
  }

  say(text) {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.socket.write(`mcsim ${text}\r\n`);
    }).then((reply) => {
      if (!reply.startsWith("OK")) throw new Error(`mcsim ${text}: ${reply}`);
      return reply;
    });
  }

  close() {
    this.socket.end();
  }
}

function splitAddress(address) {
  const at = address.lastIndexOf(":");
  return [address.slice(0, at), parseInt(address.slice(at + 1), 10)];
}

/** The run fails with `message` (the program may go on). */
async function fail(message) {
  if (!under()) return;
  const line = await Line.open();
  try {
    await line.say("fail " + message.split(/\s+/).join(" "));
  } finally {
    line.close();
  }
}

/** One participant's link to mcsim. */
class Participant {
  constructor(name, line) {
    this.name = name;
    /** The key whose read, in any form, names a client's connection `name`. */
    this.nameKey = `mcsim:name:${name}`;
    this.line = line;
    this.began = Date.now();
  }

  async say(text) {
    if (this.line) return this.line.say(text);
    return "OK";
  }

  /** Entered `section`: another participant inside fails the run. */
  enter(section) {
    return this.say(`enter ${section} ${this.name}`);
  }

  leave(section) {
    return this.say(`leave ${section} ${this.name}`);
  }

  /** Waits `seconds` of the servers' virtual time (real time outside mcsim). */
  async sleep(seconds) {
    if (!this.line) return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    await this.say(`sleep ${Math.round(seconds * 1000)} ${this.name}`);
  }

  /** Seconds since the execution began: virtual under `mcsim test`. */
  async now() {
    if (!this.line) return (Date.now() - this.began) / 1000;
    return parseFloat((await this.say("time")).split(" ")[1]);
  }

  fail(message) {
    return this.say("fail " + message.split(/\s+/).join(" "));
  }

  metric(name, value) {
    return this.say(`metric ${name} ${value}`);
  }

  sometimes(name) {
    return this.say(`sometimes ${name}`);
  }

  /** Done: mcsim waits for its commands no more. Closed again, nothing happens. */
  async close() {
    if (!this.line) return;
    const line = this.line;
    this.line = null;
    try {
      await line.say(`done ${this.name}`);
    } finally {
      line.close();
    }
  }
}

/** Links participant `name` to mcsim. */
async function participant(name) {
  if (!name || /\s/.test(name) || name.length > 200) {
    throw new Error(`a participant's name is one word (no spaces): ${JSON.stringify(name)}`);
  }
  return new Participant(name, under() ? await Line.open() : null);
}

/**
 * Runs `worker(i)` for each participant `i` < `n` at once and waits for all. A worker
 * that throws fails the run, named with its number.
 */
async function runParticipants(n, worker) {
  await Promise.all(
    Array.from({ length: n }, (_, i) =>
      Promise.resolve()
        .then(() => worker(i))
        .catch(async (e) => {
          console.error(e);
          await fail(`participant ${i} raised ${e && e.message ? e.message : e}`);
        }),
    ),
  );
}

module.exports = { under, servers, clients, fail, participant, runParticipants, Participant };
