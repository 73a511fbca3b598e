// lifeloop's hook bridge for Pi. `lifeloop run` writes this extension into
// its session folder for one launch and loads it with --extension; the
// line above the code gives HOOK, the lifeloop program, and
// $LIFELOOP_CONTROL_SOCKET names the wrapper's control socket (SOCKET).
// Each lifecycle event hands the wrapper a JSON
// object (session_id, transcript_path, cwd, turn_id, prompt, source,
// reason; never a prompt to anyone but lifeloop) and waits for its answer:
// over SOCKET, one line each way, as `lifeloop host-hook` would forward
// it, with no process started; when the socket does not answer, by
// running `lifeloop host-hook --adapter pi --hook EVENT` with the object
// on stdin (which records why the wrapper could not be reached). Context lifeloop answers at a prompt (or at session start, kept for
// the first prompt) is added to that prompt as a custom message, which Pi
// sends to the model after the user's message and keeps in the session.
// At each session start it also writes the session file's path into the
// lifeloop session folder (SESSION_POINTER), so lifeloop follows exactly
// this launch's file. Every failure is silent: the bridge never stops Pi.
import { spawn } from "node:child_process";
import { renameSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";

const TIMEOUT_MS = 30000;
const SOCKET = process.env.LIFELOOP_CONTROL_SOCKET ?? "";

// Pi does not wait for every handler before it goes on (agent_end and
// session_shutdown of a -p run overlap), so the calls are made one after
// the other, in the order of the events.
let queue: Promise<unknown> = Promise.resolve();

// call resolves to the context the wrapper answers for the hook ("" for
// none).
function call(hook: string, input: Record<string, unknown>): Promise<string> {
	const next = queue.then(async () => {
		const answer = await viaSocket(hook, input);
		return answer ?? additionalContext(await run(hook, input));
	});
	queue = next;
	return next;
}

// viaSocket hands the call to the wrapper over its control socket and
// resolves to the context it answers, or undefined when it did not answer.
function viaSocket(hook: string, input: Record<string, unknown>): Promise<string | undefined> {
	return new Promise((resolve) => {
		if (!SOCKET) {
			resolve(undefined);
			return;
		}
		let buf = "";
		let done = false;
		const finish = (v: string | undefined) => {
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
		conn.on("data", (d: Buffer) => {
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
		const req = { op: "hook", args: { adapter: "pi", hook, stdin: { ...input, hook_event_name: hook } } };
		conn.write(JSON.stringify(req) + "\n");
	});
}

function run(hook: string, input: Record<string, unknown>): Promise<string> {
	return new Promise((resolve) => {
		let out = "";
		let done = false;
		const finish = () => {
			if (!done) {
				done = true;
				resolve(out);
			}
		};
		let child: any;
		try {
			child = spawn(HOOK[0], [...HOOK.slice(1), "host-hook", "--adapter", "pi", "--hook", hook], { stdio: ["pipe", "pipe", "ignore"] });
		} catch {
			resolve("");
			return;
		}
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			finish();
		}, TIMEOUT_MS);
		child.stdout.on("data", (d: Buffer) => {
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

// pointSession records the path of the session file Pi writes (it
// exists only once the first reply has ended) for lifeloop's discovery.
function pointSession(file: string | undefined) {
	const dir = process.env.LIFELOOP_SESSION_DIR;
	if (!dir || !file) return;
	try {
		const tmp = join(dir, SESSION_POINTER + ".tmp");
		writeFileSync(tmp, file, { mode: 0o600 });
		renameSync(tmp, join(dir, SESSION_POINTER));
	} catch {}
}

function additionalContext(out: string): string {
	try {
		const text = JSON.parse(out)?.hookSpecificOutput?.additionalContext;
		return typeof text === "string" ? text : "";
	} catch {
		return "";
	}
}

// The factory never throws: Pi exits at launch when an extension's
// factory fails, and the bridge must never stop Pi.
export default function (pi: any) {
	try {
		register(pi);
	} catch {}
}

function register(pi: any) {
	let frame = "";
	let pending: string[] = [];
	const base = (ctx: any) => ({
		session_id: ctx.sessionManager.getSessionId(),
		transcript_path: ctx.sessionManager.getSessionFile() ?? "",
		cwd: ctx.cwd,
	});
	pi.on("session_start", async (event: any, ctx: any) => {
		pointSession(ctx.sessionManager.getSessionFile());
		const text = await call("session_start", { ...base(ctx), source: event.reason });
		if (text) pending.push(text);
	});
	pi.on("before_agent_start", async (event: any, ctx: any) => {
		// The frame id is the one lifeloop reads from the session file:
		// the session id and the number of this prompt's user message.
		const users = ctx.sessionManager
			.getEntries()
			.filter((e: any) => e.type === "message" && e.message?.role === "user").length;
		frame = `${ctx.sessionManager.getSessionId()}#${users + 1}`;
		const text = await call("before_agent_start", { ...base(ctx), turn_id: frame, prompt: event.prompt });
		const context = [...pending, text].filter(Boolean);
		pending = [];
		if (context.length === 0) return;
		return { message: { customType: "lifeloop", content: context.join("\n\n"), display: false } };
	});
	pi.on("agent_start", async (_event: any, ctx: any) => {
		if (frame) await call("agent_start", { ...base(ctx), turn_id: frame });
	});
	pi.on("agent_end", async (_event: any, ctx: any) => {
		if (frame) await call("agent_end", { ...base(ctx), turn_id: frame });
		frame = "";
	});
	pi.on("session_shutdown", async (event: any, ctx: any) => {
		await call("session_shutdown", { ...base(ctx), reason: event.reason });
	});
}
