// lifeloop's hook bridge for OpenClaw: a plugin `lifeloop run` loads for
// one `openclaw agent --local` launch through a configuration file of its
// own that includes the user's (the line above the code gives HOOK, the
// lifeloop program). Its typed hooks report each turn of the session the
// user talks to (trigger "user"; OpenClaw's own runs, such as the memory
// flush before a compaction, are left out), with the frame ids
// lifeloop's database reader gives the same turns ("<session id>#<n>" for
// the n-th user turn of the session since the process started):
//
//	before_prompt_build  frame.opening; context lifeloop answers is
//	                     prepended to the user's prompt (prependContext)
//	model_call_started   frame.opened (the turn's first model call)
//	agent_end            frame.ending, frame.ended
//
// Each report is a JSON object (session_id, turn_id, cwd, trigger,
// reason; never a prompt or an answer) handed to the wrapper over its
// control socket ($LIFELOOP_CONTROL_SOCKET), one line each way; when the
// socket does not answer, `lifeloop host-hook --adapter openclaw --hook
// NAME` gets it on stdin. Every failure is silent: the bridge never stops
// OpenClaw.
import { spawn } from "node:child_process";
import { createConnection } from "node:net";

const TIMEOUT_MS = 30000;
const SOCKET = process.env.LIFELOOP_CONTROL_SOCKET ?? "";

// OpenClaw may run observation hooks (model_call_started, agent_end)
// without waiting for them, so the calls are made one after the other,
// in the order of the events.
let queue = Promise.resolve();

// call resolves to the context the wrapper answers for the hook ("" for
// none).
function call(hook, input) {
	const next = queue.then(async () => {
		const answer = await viaSocket(hook, input);
		return answer ?? additionalContext(await run(hook, input));
	});
	queue = next;
	return next;
}

// viaSocket hands the call to the wrapper over its control socket and
// resolves to the context it answers, or undefined when it did not answer.
function viaSocket(hook, input) {
	return new Promise((resolve) => {
		if (!SOCKET) {
			resolve(undefined);
			return;
		}
		let buf = "";
		let done = false;
		const finish = (v) => {
			if (!done) {
				done = true;
				clearTimeout(timer);
				conn.destroy();
				resolve(v);
			}
		};
		const conn = createConnection(SOCKET);
		const timer = setTimeout(() => finish(undefined), TIMEOUT_MS);
		conn.on("error", () => finish(undefined));
		conn.on("close", () => finish(undefined));
		conn.on("data", (d) => {
			buf += d.toString();
			const nl = buf.indexOf("\n");
			if (nl < 0) return;
			try {
				const res = JSON.parse(buf.slice(0, nl));
				if (!res.ok) {
					finish(undefined);
					return;
				}
				const text = res.result?.additional_context;
				finish(typeof text === "string" ? text : "");
			} catch {
				finish(undefined);
			}
		});
		const req = { op: "hook", args: { adapter: "openclaw", hook, stdin: { ...input, hook_event_name: hook } } };
		conn.write(JSON.stringify(req) + "\n");
	});
}

function run(hook, input) {
	return new Promise((resolve) => {
		let out = "";
		let done = false;
		const finish = () => {
			if (!done) {
				done = true;
				resolve(out);
			}
		};
		let child;
		try {
			child = spawn(HOOK[0], [...HOOK.slice(1), "host-hook", "--adapter", "openclaw", "--hook", hook], { stdio: ["pipe", "pipe", "ignore"] });
		} catch {
			resolve("");
			return;
		}
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			finish();
		}, TIMEOUT_MS);
		child.stdout.on("data", (d) => {
			out += d.toString();
		});
		child.on("error", () => {
			clearTimeout(timer);
			finish();
		});
		child.on("close", () => {
			clearTimeout(timer);
			finish();
		});
		child.stdin.on("error", () => {});
		child.stdin.end(JSON.stringify({ ...input, hook_event_name: hook }));
	});
}

function additionalContext(out) {
	try {
		const text = JSON.parse(out)?.hookSpecificOutput?.additionalContext;
		return typeof text === "string" ? text : "";
	} catch {
		return "";
	}
}

// The turns of this process: user turns counted per session, and the
// open turn of each run ({frame, base, opened}; a model call's context
// has no workspace).
const counts = new Map();
const runs = new Map();

// BUDGET is each handler's time limit: OpenClaw's default for
// before_prompt_build (15 s) is shorter than a wrapper's answer may take.
const BUDGET = { timeoutMs: TIMEOUT_MS + 5000 };

function base(ctx) {
	return { session_id: ctx?.sessionId ?? "", cwd: ctx?.workspaceDir ?? "" };
}

export default {
	id: "lifeloop-bridge",
	name: "lifeloop bridge",
	description: "Reports each turn's lifecycle to the lifeloop wrapper that launched OpenClaw.",
	register(api) {
		api.on("before_prompt_build", async (_event, ctx) => {
			if (ctx?.trigger !== "user" || !ctx?.sessionId || !ctx?.runId) return undefined;
			const n = (counts.get(ctx.sessionId) ?? 0) + 1;
			counts.set(ctx.sessionId, n);
			const frame = `${ctx.sessionId}#${n}`;
			const t = { frame, base: base(ctx), opened: false };
			runs.set(ctx.runId, t);
			const text = await call("before_prompt_build", { ...t.base, turn_id: frame, trigger: ctx.trigger });
			return text ? { prependContext: text } : undefined;
		}, BUDGET);
		api.on("model_call_started", async (event, ctx) => {
			const t = runs.get(event?.runId ?? ctx?.runId);
			if (!t || t.opened) return;
			t.opened = true;
			await call("model_call_started", { ...t.base, turn_id: t.frame });
		}, BUDGET);
		api.on("agent_end", async (event, ctx) => {
			const id = event?.runId ?? ctx?.runId;
			const t = runs.get(id);
			if (!t) return;
			runs.delete(id);
			await call("agent_end", { ...t.base, turn_id: t.frame, reason: event?.success === false ? "error" : "stop" });
		}, BUDGET);
	},
};
