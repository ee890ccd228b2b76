// The Agent SDK side of the real-client tests: it drives the executable
// named by COHORT_SDK_EXE through @anthropic-ai/claude-agent-sdk's query()
// and prints what it saw, one JSON object per line, for the Go test to
// check. Usage: node driver.mjs SCENARIO (plain, fanout, hook, interrupt,
// mode, multiturn, sdkmcp, hosted — the last in hosted.mjs).
import { query, createSdkMcpServer, tool } from '@anthropic-ai/claude-agent-sdk';
import { z } from 'zod';

const scenario = process.argv[2];
const exe = process.env.COHORT_SDK_EXE;
const cwd = process.env.COHORT_SDK_CWD;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

// A queue of user messages the scenario feeds as it goes.
export function inbox() {
  const items = [];
  let wake = null, closed = false;
  return {
    push(text) { items.push({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, session_id: '' }); wake?.(); },
    close() { closed = true; wake?.(); },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (items.length) yield items.shift();
        if (closed) return;
        await new Promise((r) => (wake = r));
        wake = null;
      }
    },
  };
}

const seen = { canUseTool: [], hooks: [] };
const record = (kind) => (name, input, opts) => {
  seen.canUseTool.push({ tool: name, input, agentID: opts.agentID ?? null, toolUseID: opts.toolUseID ?? null });
  out({ kind: 'can_use_tool', tool: name, input, agentID: opts.agentID ?? null, toolUseID: opts.toolUseID ?? null });
  return kind(name, input, opts);
};

const scenarios = {
  plain: { prompts: ['say hello'], options: {} },
  fanout: {
    prompts: ['fan out three writers'],
    options: {
      canUseTool: record(async (name, input) =>
        String(input.file_path ?? '').endsWith('sub-2.txt')
          ? { behavior: 'deny', message: 'the host refuses sub-2' }
          : { behavior: 'allow', updatedInput: input }),
    },
  },
  hook: {
    prompts: ['run the hooked command'],
    options: {
      canUseTool: record(async (name, input) => ({ behavior: 'allow', updatedInput: input })),
      hooks: {
        PreToolUse: [{
          matcher: 'Bash',
          hooks: [async (input) => {
            out({ kind: 'hook', event: input.hook_event_name, tool: input.tool_name, command: input.tool_input?.command ?? null });
            return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the host hook forbids Bash here' } };
          }],
        }],
      },
    },
  },
  interrupt: { prompts: ['run something slow'], options: { allowedTools: ['Bash'] } },
  mode: {
    prompts: ['write mode-one.txt'],
    options: {
      canUseTool: record(async (name, input) => ({ behavior: 'deny', message: 'the host says no' })),
    },
  },
  multiturn: { prompts: ['first: remember the number 42'], options: {} },
  sdkmcp: {
    prompts: ['look up the host value'],
    options: {
      allowedTools: ['mcp__host__lookup'],
      mcpServers: {
        host: createSdkMcpServer({
          name: 'host',
          tools: [tool('lookup', 'Looks a key up in the host application.', { key: z.string() }, async ({ key }) => {
            out({ kind: 'mcp_call', tool: 'lookup', input: { key } });
            return { content: [{ type: 'text', text: `host value for ${key}: 7312` }] };
          }, { alwaysLoad: true })],
        }),
      },
    },
  },
};

// drive runs body with a query over box, within 90 s, and prints done —
// or the error that stopped it.
async function drive(box, options, body) {
  const q = query({
    prompt: box,
    options: { pathToClaudeCodeExecutable: exe, cwd, env: process.env, ...options,
      stderr: (s) => process.stderr.write(s) },
  });
  const deadline = setTimeout(() => { out({ kind: 'error', message: 'the scenario took over 90 s' }); process.exit(3); }, 90_000);
  try {
    await body(q);
    out({ kind: 'done' });
  } catch (e) {
    out({ kind: 'error', message: String(e && e.stack || e) });
    process.exitCode = 1;
  } finally {
    clearTimeout(deadline);
    q.close?.();
  }
}

if (scenario === 'hosted') {
  const { hosted } = await import('./hosted.mjs');
  await hosted({ drive, createSdkMcpServer, tool, z, inbox, out, cwd });
  process.exit(process.exitCode ?? 0);
}

const sc = scenarios[scenario];
if (!sc) { out({ kind: 'error', message: 'unknown scenario ' + scenario }); process.exit(2); }

const box = inbox();
await drive(box, sc.options, async (q) => {
  if (scenario === 'mode') await q.setPermissionMode('acceptEdits');
  box.push(sc.prompts[0]);
  let results = 0;
  for await (const m of q) {
    out({ kind: 'message', message: m });
    if (scenario === 'interrupt' && m.type === 'assistant' && m.message.content.some((b) => b.type === 'tool_use')) {
      out({ kind: 'interrupting' });
      await q.interrupt();
      out({ kind: 'interrupted' });
    }
    if (m.type !== 'result') continue;
    results++;
    if (scenario === 'mode' && results === 1) {
      await q.setPermissionMode('default');
      box.push('write mode-two.txt');
      continue;
    }
    if (scenario === 'multiturn' && results === 1) {
      box.push('second: which number did I give you?');
      continue;
    }
    box.close();
    break;
  }
});
