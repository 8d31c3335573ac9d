const core = await import('/work/wt-perf/packages/core/dist/src/index.js');
for (let i=0;i<4;i++){ const s=process.hrtime.bigint(); const r=await core.loadRepo('/tmp/perf-lab1000/repo'); console.log(i, (Number(process.hrtime.bigint()-s)/1e6).toFixed(1),'ms', Object.keys(r.manifest.hosts).length, r.variables.size); }
