// Two locks kept in memcached, in Node.js with memjs (binary protocol), for `mcsim test`:
//
//     npm install
//     mcsim test --clients 3 -- node lock.js get-set   # FAILED: exclusion of section broken
//     mcsim test --clients 3 -- node lock.js add       # passed
//
// Each of MCSIM_CLIENTS participants takes the lock `lock_x` twice and says when it
// enters and leaves the section (mcsim fails the run if two are inside at once).
// `get-set` checks that the key is missing, then sets it: two participants can both find
// it missing. `add` takes it with `add`, which memcached lets one win.
"use strict";

const memjs = require("memjs");
const mcsim = require("mcsim-control");

async function acquire(mc, variant, owner) {
  if (variant === "add") {
    return mc.add("lock_x", owner, { expires: 5 });
  }
  const { value } = await mc.get("lock_x");
  if (value !== null) return false;
  return mc.set("lock_x", owner, { expires: 5 });
}

async function main() {
  const variant = process.argv[2];
  if (variant !== "get-set" && variant !== "add") {
    console.error("usage: node lock.js get-set|add");
    process.exit(2);
  }
  await mcsim.runParticipants(mcsim.clients(), async (i) => {
    const me = await mcsim.participant(`t${i}`);
    // mcsim holds each command until its turn: more than memjs's half a second, and a
    // retry would send the command twice.
    const mc = memjs.Client.create(mcsim.servers().join(","), {
      timeout: 30,
      retries: 0,
      logger: { log() {} },
    });
    await mc.get(me.nameKey);
    for (let round = 0; round < 2; round++) {
      while (!(await acquire(mc, variant, me.name))) {
        await me.sleep(0.01);
      }
      await me.enter("section");
      await mc.set("work", me.name, {});
      await me.leave("section");
      await mc.delete("lock_x");
    }
    mc.close();
    await me.close();
  });
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
