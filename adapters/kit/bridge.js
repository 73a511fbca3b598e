// lifeloop's hook bridge runtime: the part every hook bridge shares (a
// module lifeloop writes for one harness and the harness loads into its
// own process). The bridge's own glue follows this runtime in the same
// file and reaches the wrapper only through `lifeloop`, made for it by
// lifeloopBridge (adapters/kit/bridge.go writes that line):
//
//	lifeloop.call(hook, input)  hand one hook call to the wrapper; resolves
//	                            to the context it answers ("" for none)
//	lifeloop.settled()          resolves once every call made so far is done
//	lifeloop.timeoutMs          how long one call may take at most
//
// A call is the control wire's hook operation (internal/control OpHook
// with hooks.HookArgs): one line of JSON to $LIFELOOP_CONTROL_SOCKET,
// {"op":"hook","args":{"adapter","hook","stdin"}}, and one line back,
// {"ok":true,"result":{"additional_context",...}}, as `lifeloop host-hook`
// would forward it, with no process started. When the socket is not set,
// cannot be reached, answers an error or not within timeoutMs, the
// program runs instead, `PROGRAM host-hook --adapter ADAPTER --hook
// HOOK` with the same object on stdin (it records why the wrapper could
// not be reached), and its hookSpecificOutput.additionalContext is the
// answer. Calls go one after the other, in the order they were made:
// harnesses do not always wait for one handler before they run the next.
// Every failure is silent: a call never rejects and the bridge never
// stops the harness.
//
// The glue may not declare the names this runtime declares at the top:
// lifeloopBridge, spawn, createConnection.
import { spawn } from "node:child_process";
import { createConnection } from "node:net";

// lifeloopBridge returns the calls of adapter's bridge; program is the
// lifeloop program and any leading arguments, for the fallback.
function lifeloopBridge(adapter, program) {
	const timeoutMs = 30000;
	const socket = process.env.LIFELOOP_CONTROL_SOCKET ?? "";
	let queue = Promise.resolve("");

	// stdin is the hook's input as `lifeloop host-hook` reads it.
	const stdin = (hook, input) => ({ ...input, hook_event_name: hook });

	function call(hook, input) {
		const next = queue
			.then(async () => {
				const answer = await viaSocket(hook, input);
				return answer ?? additionalContext(await viaProgram(hook, input));
			})
			.catch(() => "");
		queue = next;
		return next;
	}

	// viaSocket resolves to the context the wrapper answers, or undefined
	// when it did not answer.
	function viaSocket(hook, input) {
		if (!socket) return Promise.resolve(undefined);
		const request = JSON.stringify({ op: "hook", args: { adapter, hook, stdin: stdin(hook, input) } }) + "\n";
		return new Promise((resolve) => {
			let conn;
			let timer;
			let done = false;
			let line = "";
			const finish = (v) => {
				if (done) return;
				done = true;
				clearTimeout(timer);
				conn?.destroy();
				resolve(v);
			};
			try {
				conn = createConnection(socket);
			} catch {
				finish(undefined);
				return;
			}
			timer = setTimeout(() => finish(undefined), timeoutMs);
			conn.setEncoding("utf8");
			conn.on("error", () => finish(undefined));
			conn.on("close", () => finish(undefined));
			conn.on("data", (chunk) => {
				line += chunk;
				const nl = line.indexOf("\n");
				if (nl >= 0) finish(wrapperContext(line.slice(0, nl)));
			});
			// The connection stays open until the answer: the wrapper
			// drops a call whose caller hung up.
			conn.write(request);
		});
	}

	// wrapperContext reads the wrapper's answer line (hooks.HookReply in
	// control.Response): its context, or undefined for an error.
	function wrapperContext(line) {
		try {
			const res = JSON.parse(line);
			if (res?.ok !== true) return undefined;
			const text = res.result?.additional_context;
			return typeof text === "string" ? text : "";
		} catch {
			return undefined;
		}
	}

	// viaProgram runs `PROGRAM host-hook` and resolves to its stdout ("" when
	// it cannot start).
	function viaProgram(hook, input) {
		const request = JSON.stringify(stdin(hook, input));
		return new Promise((resolve) => {
			let out = "";
			let child;
			let timer;
			let done = false;
			const finish = () => {
				if (done) return;
				done = true;
				clearTimeout(timer);
				resolve(out);
			};
			try {
				child = spawn(program[0], [...program.slice(1), "host-hook", "--adapter", adapter, "--hook", hook], { stdio: ["pipe", "pipe", "ignore"] });
			} catch {
				finish();
				return;
			}
			timer = setTimeout(() => {
				child.kill("SIGKILL");
				finish();
			}, timeoutMs);
			child.stdout.setEncoding("utf8");
			child.stdout.on("data", (chunk) => {
				out += chunk;
			});
			child.on("error", finish);
			child.on("close", finish);
			child.stdin.on("error", () => {});
			child.stdin.end(request);
		});
	}

	// additionalContext reads the hook response `lifeloop host-hook` prints.
	function additionalContext(out) {
		try {
			const text = JSON.parse(out)?.hookSpecificOutput?.additionalContext;
			return typeof text === "string" ? text : "";
		} catch {
			return "";
		}
	}

	return { call, settled: () => queue, timeoutMs };
}
