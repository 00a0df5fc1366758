import { parseYaml, parseYamlFast } from './dist/src/yamlfile.js';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
const f = process.argv[2];
const t = readFileSync(f, 'latin1');
let a, b; try { a = parseYamlFast(t, 'x', f); } catch(e) { console.log('fast throws', e.message) } try { b = parseYaml(t, f, 'x').value; } catch (e) { console.log('slow', e.message); }
function diff(x, y, p='') { if (isDeepStrictEqual(x,y)) return; if (typeof x==='object'&&x&&typeof y==='object'&&y) { for (const k of new Set([...Object.keys(x),...Object.keys(y)])) diff(x[k],y[k],p+'.'+k); return;} console.log(p, JSON.stringify(x), JSON.stringify(y)); }
if (a !== undefined && b !== undefined) diff(a,b);
