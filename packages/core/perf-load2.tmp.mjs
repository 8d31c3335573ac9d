import { readFile, readdir } from 'node:fs/promises';
import { readFileSync, readdirSync } from 'node:fs';
const core = await import('/work/wt-perf/packages/core/dist/src/index.js');
const st = await import('/work/wt-perf/packages/core/dist/src/cache/store.js');
const t=async(l,f)=>{const s=process.hrtime.bigint(); await f(); console.log(l,(Number(process.hrtime.bigint()-s)/1e6).toFixed(1));};
const root='/tmp/perf-lab1000/repo';
for (let i=0;i<3;i++){
await t('readCache', ()=>st.readCacheFile(root+'/.git/fleet-cache','repo-v1.json','fleet.repo-cache/v1 @fleet/core@0.1.0'));
await t('readdir+readFile async', async()=>{const e=await readdir(root+'/hosts'); await Promise.all(e.map(x=>readFile(root+'/hosts/'+x)));});
await t('readdir+readFile sync', ()=>{const e=readdirSync(root+'/hosts'); for(const x of e) readFileSync(root+'/hosts/'+x);});
await t('blobIds', ()=>{const e=readdirSync(root+'/hosts'); for(const x of e) st.blobId(readFileSync(root+'/hosts/'+x));});
await t('loadRepo', ()=>core.loadRepo(root));
}
