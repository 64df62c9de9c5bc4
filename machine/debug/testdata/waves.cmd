# program: hazards/blocks_share_core.pto
# A block after the first wave is named by its block, as findings name it,
# before it has a core: 96 AIV blocks on 48 AIVs.
break get core=r0.b60.aiv
break write @Y[208, 0] core=b61.aiv
core r0.b60.aiv
info breaks
until S r0.b50.aiv
core r0.b50.aiv
continue
core
continue
continue
print @Y[208, 0:4]
continue
# errors
break get core=r0.b96.aiv
break get core=r0.b60.aic
