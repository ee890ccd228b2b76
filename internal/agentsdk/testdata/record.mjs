// A recording stand-in for the executable: the SDK spawns it, it runs
// COHORT_SDK_RECORD_EXE with the same arguments and copies both streams
// through, and it logs every line each way, in the order they pass, to
// COHORT_SDK_RECORD_FILE as {"dir": "in"|"out", "line": …}, after a
// first line with the arguments ({"dir": "args", "line": [...]}).
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const file = process.env.COHORT_SDK_RECORD_FILE;
appendFileSync(file, JSON.stringify({ dir: 'args', line: process.argv.slice(2) }) + '\n');
const child = spawn(process.env.COHORT_SDK_RECORD_EXE, process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] });
const log = (dir, line) => { if (line.trim()) appendFileSync(file, JSON.stringify({ dir, line: JSON.parse(line) }) + '\n'); };

createInterface({ input: process.stdin }).on('line', (l) => { log('in', l); child.stdin.write(l + '\n'); }).on('close', () => child.stdin.end());
createInterface({ input: child.stdout }).on('line', (l) => { log('out', l); process.stdout.write(l + '\n'); });
child.on('exit', (code, sig) => process.exit(code ?? 1));
process.on('SIGTERM', () => child.kill('SIGTERM'));
