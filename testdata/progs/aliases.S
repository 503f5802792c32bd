/* aliases.S: one function under three names at one address, the way
 * glibc's clone3.S defines __clone3, __GI___clone3 and clone3. GNU as
 * writes a DW_TAG_subprogram for each, with equal ranges, in a unit whose
 * language is DW_LANG_Mips_Assembler (0x8001). BFD takes DW_AT_name as the
 * symbol name in such a unit (mangle_style 0), so addr2line prints the
 * last of the three, "aliased", not the ELF symbol table's first alias. */
	.text
	.globl	main
	.type	main, @function
main:
	call	__aliased
	xorl	%eax, %eax
	ret
	.size	main, .-main

	.type	__aliased, @function
__aliased:
	.type	__GI___aliased, @function
__GI___aliased:
	.globl	aliased
	.type	aliased, @function
aliased:
	movl	$42, %eax
	nop
	nop
	ret
	.size	__aliased, .-__aliased
	.size	__GI___aliased, .-__GI___aliased
	.size	aliased, .-aliased
	.section	.note.GNU-stack,"",@progbits
